/*
Copyright The adminsched scheduler-plugins Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// ReasonSpotRecovery is Normal, on a fallback pod evicted because a spot
// node that fits it exists again.
const ReasonSpotRecovery = "SpotRecovery"

// boundPods selects the pods that hold node resources: bound, not finished.
const boundPods = "spec.nodeName!=,status.phase!=" + string(v1.PodSucceeded) + ",status.phase!=" + string(v1.PodFailed)

func recoveryOn(p *policy.Policy) bool {
	return p.RecoveryInterval > 0 && p.MaxRecoveriesPerInterval > 0
}

// watchNodes adds what recovery reads: the nodes, from factory, and the
// bound pods of every namespace indexed by node, from a factory of the
// controller's own.
func (c *Controller) watchNodes(factory informers.SharedInformerFactory) error {
	nodes := factory.Core().V1().Nodes()
	c.nodes = nodes.Lister()
	c.boundFactory = informers.NewSharedInformerFactoryWithOptions(c.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = boundPods
	}))
	c.bound = c.boundFactory.Core().V1().Pods().Informer()
	if err := c.bound.AddIndexers(cache.Indexers{nodeIndex: indexByNode}); err != nil {
		return fmt.Errorf("bound pod index: %w", err)
	}
	c.synced = append(c.synced, nodes.Informer().HasSynced, c.bound.HasSynced)
	return nil
}

// recoverable reports whether pod is a fallback pod recovery may move: on
// an on-demand node, in a spot slot (never one the minimum needs).
func (c *Controller) recoverable(p *policy.Policy, pod *v1.Pod) bool {
	if !isActive(pod) || pod.Annotations[share.FallbackAnnotation] == "" || pod.Spec.NodeName == "" {
		return false
	}
	slot, err := strconv.ParseInt(pod.Labels[share.SlotLabel], 10, 32)
	if err != nil || p.SlotClass(int32(slot)) != share.Spot {
		return false
	}
	node, err := c.nodes.Get(pod.Spec.NodeName)
	if err != nil {
		return false
	}
	class, ok := p.NodeClass(node)
	return ok && class == share.OnDemand
}

// recoverSpot evicts, once per recovery interval, at most
// p.MaxRecoveriesPerInterval of the workload's fallback pods for which a
// spot node fits now, and marks their slots recovering. The interval starts
// when the workload first shows a fallback pod, and is stretched by the
// backoff. It returns when the next round is due (zero if none).
func (c *Controller) recoverSpot(ctx context.Context, p *policy.Policy, st *workloadState, members []member) (time.Time, error) {
	if c.nodes == nil || !recoveryOn(p) {
		return time.Time{}, nil
	}
	var candidates []member
	for _, m := range members {
		if c.recoverable(p, m.pod) {
			candidates = append(candidates, m)
		}
	}
	if len(candidates) == 0 {
		st.nextRecovery = time.Time{}
		return st.nextRecovery, nil
	}
	now := c.clock.Now()
	interval := p.RecoveryInterval * st.backoff
	if st.nextRecovery.IsZero() {
		st.nextRecovery = now.Add(interval)
	}
	if now.Before(st.nextRecovery) {
		return st.nextRecovery, nil
	}
	st.nextRecovery = now.Add(interval)
	slices.SortFunc(candidates, func(a, b member) int { return int(slotOf(a.pod)) - int(slotOf(b.pod)) })
	logger := klog.FromContext(ctx)
	reserved := map[string]v1.ResourceList{}
	evicted := int32(0)
	for _, m := range candidates {
		if evicted >= p.MaxRecoveriesPerInterval {
			break
		}
		node, want, ok := c.spotNodeFor(logger, p, m.pod, reserved)
		if !ok {
			continue
		}
		err := c.evict(ctx, m.pod)
		switch {
		case apierrors.IsTooManyRequests(err):
			logger.V(2).Info("Eviction refused for now (disruption budget); retrying next interval", "pod", klog.KObj(m.pod), "next", st.nextRecovery)
			return st.nextRecovery, nil
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			continue
		case err != nil:
			return st.nextRecovery, fmt.Errorf("evict fallback pod %s/%s: %w", m.pod.Namespace, m.pod.Name, err)
		}
		evicted++
		reserve(reserved, node.Name, want)
		st.marks[slotKey{m.space, slotOf(m.pod)}] = mark{recovering: true}
		logger.Info("Evicted a fallback pod: a spot node fits it again", "pod", klog.KObj(m.pod), "node", klog.KObj(node))
		c.recorder.Eventf(m.pod, nil, v1.EventTypeNormal, ReasonSpotRecovery, "Evict", "Evicted to return slot %s to spot: node %s fits it", m.pod.Labels[share.SlotLabel], node.Name)
	}
	return st.nextRecovery, nil
}

// evict asks the Eviction API, which honours PodDisruptionBudgets, to
// evict pod as the cache shows it.
func (c *Controller) evict(ctx context.Context, pod *v1.Pod) error {
	uid, rv := pod.UID, pod.ResourceVersion
	return c.client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}},
	})
}

// slotOf is a decided pod's slot, 0 if it has none.
func slotOf(pod *v1.Pod) int32 {
	s, _ := strconv.ParseInt(pod.Labels[share.SlotLabel], 10, 32)
	return int32(s)
}
