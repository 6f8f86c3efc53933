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
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1/validation"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/quota"
)

// sync plans every quota from the caches and carries the plan out: lifts
// the gates it allows, tells each held pod once why it waits, and writes
// each status that changed. Every write is guarded by the resourceVersion
// it was computed from; a conflict fails the sync, which is retried on a
// fresher cache.
func (c *Controller) sync(ctx context.Context) error {
	in, err := c.view()
	if err != nil {
		return err
	}
	p := makePlan(in)
	var errs []error
	for _, pod := range p.lift {
		if err := c.lift(ctx, pod); err != nil {
			errs = append(errs, err)
		}
	}
	for _, h := range p.hold {
		if !c.told[h.pod.UID] {
			c.recorder.Eventf(h.pod, v1.EventTypeNormal, EventHeld, "Waiting for room in the node pool: %s", h.message)
			c.told[h.pod.UID] = true
			klog.FromContext(ctx).V(4).Info("Holding the pod", "pod", klog.KObj(h.pod), "reason", h.message)
		}
	}
	now := metav1.Now()
	for _, pl := range p.pools {
		if err := c.writeStatus(ctx, pl, now); err != nil {
			errs = append(errs, err)
		}
	}
	c.series.export(p)
	return errors.Join(errs...)
}

// view reads the caches. The pods are those of the namespaces a valid
// quota's team holds, and every gated pod.
func (c *Controller) view() (*view, error) {
	quotas := make([]*v1alpha1.NodePoolQuota, 0, len(c.quotas.Informer.GetStore().List()))
	for _, obj := range c.quotas.Informer.GetStore().List() {
		if q, ok := obj.(*v1alpha1.NodePoolQuota); ok {
			quotas = append(quotas, q)
		}
	}
	slices.SortFunc(quotas, func(a, b *v1alpha1.NodePoolQuota) int { return strings.Compare(a.Name, b.Name) })
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	nsList, err := c.namespaces.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	namespaces := make(map[string]labels.Set, len(nsList))
	for _, ns := range nsList {
		namespaces[ns.Name] = labels.Set(ns.Labels)
	}
	in := &view{quotas: quotas, nodes: nodes, namespaces: namespaces}
	// What the schema cannot check; an invalid quota holds no pod, and
	// its Valid condition says why.
	in.invalid = func(q *v1alpha1.NodePoolQuota) string {
		if errs := validation.ValidateNodePoolQuota(q); len(errs) > 0 {
			return errs.ToAggregate().Error()
		}
		return ""
	}

	byUID := map[types.UID]*v1.Pod{}
	addPod := func(pod *v1.Pod) {
		if byUID[pod.UID] == nil {
			byUID[pod.UID] = pod
			in.pods = append(in.pods, pod)
		}
	}
	teamNamespaces := map[string]bool{}
	for _, q := range quotas {
		if in.invalid(q) != "" {
			continue
		}
		compiled, err := quota.Compile(q)
		if err != nil {
			continue
		}
		for ns, l := range namespaces {
			if compiled.TeamOf(ns, l) >= 0 {
				teamNamespaces[ns] = true
			}
		}
	}
	for ns := range teamNamespaces {
		pods, err := c.pods.Pods(ns).List(labels.Everything())
		if err != nil {
			return nil, err
		}
		for _, pod := range pods {
			addPod(pod)
		}
	}
	gated, err := c.podIndex.ByIndex(gatedIndex, "gated")
	if err != nil {
		return nil, err
	}
	for _, obj := range gated {
		if pod, ok := obj.(*v1.Pod); ok {
			addPod(pod)
		}
	}

	// Forget the lifts the cache has caught up with, and the Events of
	// pods no longer gated.
	for uid, rv := range c.lifted {
		pod := byUID[uid]
		if pod == nil || !hasGate(pod) || pod.ResourceVersion != rv {
			delete(c.lifted, uid)
		}
	}
	for uid := range c.told {
		if pod := byUID[uid]; pod == nil || !hasGate(pod) {
			delete(c.told, uid)
		}
	}
	in.gated = func(pod *v1.Pod) bool {
		rv, ok := c.lifted[pod.UID]
		return hasGate(pod) && (!ok || rv != pod.ResourceVersion)
	}
	return in, nil
}

// lift removes the quota's gate from pod, and no other, with an Update
// guarded by the resourceVersion the plan read.
func (c *Controller) lift(ctx context.Context, pod *v1.Pod) error {
	updated := pod.DeepCopy()
	updated.Spec.SchedulingGates = slices.DeleteFunc(updated.Spec.SchedulingGates, func(g v1.PodSchedulingGate) bool { return g.Name == v1alpha1.SchedulingGate })
	_, err := c.client.CoreV1().Pods(pod.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("lifting the gate of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.lifted[pod.UID] = pod.ResourceVersion
	delete(c.told, pod.UID)
	klog.FromContext(ctx).V(2).Info("Lifted the NodePoolQuota gate", "pod", klog.KObj(pod))
	return nil
}

// writeStatus writes pl's status when it differs from the stored one.
func (c *Controller) writeStatus(ctx context.Context, pl *pool, now metav1.Time) error {
	st := pl.status(&pl.obj.Status, now)
	if equality.Semantic.DeepEqual(&pl.obj.Status, st) {
		return nil
	}
	updated := pl.obj.DeepCopy()
	updated.Status = *st
	_, err := c.quotas.Client.UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("writing the status of NodePoolQuota %s: %w", pl.obj.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Wrote the NodePoolQuota's status", "nodePoolQuota", klog.KObj(pl.obj), "heldPods", st.HeldPods, "nodes", st.Nodes)
	return nil
}
