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

package nodepoolquota

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/quota"
)

var _ fwk.EnqueueExtensions = &NodePoolQuota{}

// quotaResource is how the framework names NodePoolQuota events: the
// resource, version and group of the custom resource, watched through its
// dynamic informers.
const quotaResource = fwk.EventResource("nodepoolquotas." + "v1alpha1." + v1alpha1.GroupName)

// EventsToRegister returns the events that can give a rejected pod room:
// a pod of its team leaving the pool, a quota that limits its team less,
// and a node that joins or leaves a pool. An added quota only adds limits,
// so it is not registered.
func (pl *NodePoolQuota) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}, QueueingHintFn: pl.isSchedulableAfterPodDeleted},
		{Event: fwk.ClusterEvent{Resource: quotaResource, ActionType: fwk.Update | fwk.Delete}, QueueingHintFn: pl.isSchedulableAfterQuotaChange},
		// A node added outside the pools, or relabelled out of one, is
		// room; telling which pool rejected the pod would need the
		// rejection's node, which the hint does not get.
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
	}, nil
}

// isSchedulableAfterPodDeleted queues the pod when the deleted pod was on a
// node and counted against a team the pod shares a quota with.
func (pl *NodePoolQuota) isSchedulableAfterPodDeleted(logger klog.Logger, pod *v1.Pod, oldObj, _ interface{}) (fwk.QueueingHint, error) {
	if d, ok := oldObj.(cache.DeletedFinalStateUnknown); ok {
		oldObj = d.Obj
	}
	deleted, ok := oldObj.(*v1.Pod)
	if !ok {
		return fwk.Queue, fmt.Errorf("%s: want a *v1.Pod, got %T", Name, oldObj)
	}
	if deleted.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	pairs := pl.pairsFor(pod)
	if len(pairs) == 0 {
		// No quota counts the pod any more: what rejected it is gone.
		return fwk.Queue, nil
	}
	for i := range pairs {
		p := &pairs[i]
		if p.q.TeamOf(deleted.Namespace, pl.namespaceLabels(deleted.Namespace)) == p.team {
			logger.V(5).Info("A pod of the team left a pool", "pod", klog.KObj(pod), "deleted", klog.KObj(deleted), "pool", p.q.Name, "team", p.teamQuota().Name)
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// isSchedulableAfterQuotaChange queues the pod when a quota that limited
// its team was deleted, or changed so that it limits the team less: a
// limit rose or was removed, the pool's nodes changed, or the team no
// longer holds the pod's namespace.
func (pl *NodePoolQuota) isSchedulableAfterQuotaChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldQ, err := asQuota(oldObj)
	if err != nil || oldQ == nil {
		return fwk.Queue, err
	}
	newQ, err := asQuota(newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if eases(oldQ, newQ, pod.Namespace, pl.namespaceLabels(pod.Namespace)) {
		logger.V(5).Info("A node pool quota limits the pod's team less", "pod", klog.KObj(pod), "quota", klog.KObj(oldQ))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// eases reports whether newQ (nil: deleted) limits the team of namespace ns
// less than oldQ did.
func eases(oldQ, newQ *v1alpha1.NodePoolQuota, ns string, nsLabels map[string]string) bool {
	return easer(oldQ, newQ)(ns, nsLabels)
}

// easer compiles oldQ and newQ once and returns eases for them. A quota
// that did not limit the namespace's team could not have rejected its pods.
func easer(oldQ, newQ *v1alpha1.NodePoolQuota) func(ns string, nsLabels map[string]string) bool {
	before, err := quota.Compile(oldQ)
	if err != nil {
		// An invalid quota limits no one: it rejected no pod.
		return func(string, map[string]string) bool { return false }
	}
	moved := newQ == nil || !equality.Semantic.DeepEqual(oldQ.Spec.NodeSelector, newQ.Spec.NodeSelector)
	var after *quota.Quota
	if !moved {
		if after, err = quota.Compile(newQ); err != nil {
			moved = true // it limits no one now
		}
	}
	return func(ns string, nsLabels map[string]string) bool {
		oldT := before.TeamOf(ns, nsLabels)
		if oldT < 0 {
			return false
		}
		if moved {
			return true
		}
		newT := after.TeamOf(ns, nsLabels)
		if newT < 0 || after.Teams[newT].Name != before.Teams[oldT].Name {
			return true
		}
		limits := map[v1.ResourceName]int64{}
		for _, l := range after.Teams[newT].Limits {
			limits[l.Resource] = l.Max
		}
		for _, l := range before.Teams[oldT].Limits {
			if max, ok := limits[l.Resource]; !ok || max > l.Max {
				return true
			}
		}
		return false
	}
}

// asQuota reads a NodePoolQuota from an event's object: unstructured from
// the framework's dynamic informers, typed from the plugin's own, nil for
// nil.
func asQuota(obj interface{}) (*v1alpha1.NodePoolQuota, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	switch o := obj.(type) {
	case nil:
		return nil, nil
	case *v1alpha1.NodePoolQuota:
		return o, nil
	case *unstructured.Unstructured:
		if o == nil {
			return nil, nil
		}
		q := &v1alpha1.NodePoolQuota{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), q); err != nil {
			return nil, fmt.Errorf("%s: reading a NodePoolQuota: %w", Name, err)
		}
		return q, nil
	default:
		return nil, fmt.Errorf("%s: want a NodePoolQuota, got %T", Name, obj)
	}
}
