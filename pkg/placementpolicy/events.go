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

package placementpolicy

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// namespaceResource is the core/v1 namespaces resource in the
// <resource>.<version>.<group> form the scheduler resolves through its
// dynamic informers: the framework has no built-in Namespace event.
const namespaceResource fwk.EventResource = "namespaces.v1."

// EventsToRegister returns the events that can make a pod this plugin
// rejected schedulable, each with a hint that queues the pod only when the
// change helps it: a node that now matches its Require rules, or a change of
// the pod's or its namespace's labels that changes which rules apply.
func (pl *PlacementPolicy) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	events := []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel}, QueueingHintFn: pl.isSchedulableAfterPodLabelChange},
	}
	if pl.namespaces != nil {
		events = append(events, fwk.ClusterEventWithHint{
			Event: fwk.ClusterEvent{Resource: namespaceResource, ActionType: fwk.Update}, QueueingHintFn: pl.isSchedulableAfterNamespaceChange,
		})
	}
	return events, nil
}

// isSchedulableAfterNodeChange queues the pod when a node is added that
// matches its Require rules, or a node's labels change so that it matches
// them now and did not before.
func (pl *PlacementPolicy) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	newNode, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("%s: want a *v1.Node, got %T", Name, newObj)
	}
	s, err := pl.rulesFor(pod)
	if err != nil {
		return fwk.Queue, err
	}
	if s.empty() || len(s.required) == 0 {
		// The rules that rejected the pod no longer apply to it.
		return fwk.Queue, nil
	}
	if ok, r := s.admits(newNode); !ok {
		logger.V(5).Info("Node does not match a placement rule of the pod", "pod", klog.KObj(pod), "node", klog.KObj(newNode), "rule", r.name)
		return fwk.QueueSkip, nil
	}
	if oldNode, isNode := oldObj.(*v1.Node); isNode && oldNode != nil {
		if ok, _ := s.admits(oldNode); ok {
			// It matched before: this update is not what the pod waits for.
			return fwk.QueueSkip, nil
		}
	}
	logger.V(5).Info("Node now matches the placement rules of the pod", "pod", klog.KObj(pod), "node", klog.KObj(newNode))
	return fwk.Queue, nil
}

// isSchedulableAfterPodLabelChange queues the pod when its new labels change
// which Require rules apply to it.
func (pl *PlacementPolicy) isSchedulableAfterPodLabelChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldPod, okOld := oldObj.(*v1.Pod)
	newPod, okNew := newObj.(*v1.Pod)
	if !okOld || !okNew {
		return fwk.Queue, fmt.Errorf("%s: want two *v1.Pod, got %T and %T", Name, oldObj, newObj)
	}
	before, err := pl.rulesFor(oldPod)
	if err != nil {
		return fwk.Queue, err
	}
	after, err := pl.rulesFor(newPod)
	if err != nil {
		return fwk.Queue, err
	}
	if sameRequired(before, after) {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Pod labels changed its placement rules", "pod", klog.KObj(pod), "before", before, "after", after)
	return fwk.Queue, nil
}

// isSchedulableAfterNamespaceChange queues the pod when its namespace's new
// labels change which Require rules apply to it.
func (pl *PlacementPolicy) isSchedulableAfterNamespaceChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldNS, err := meta.Accessor(oldObj)
	if err != nil {
		return fwk.Queue, fmt.Errorf("%s: namespace event: %w", Name, err)
	}
	newNS, err := meta.Accessor(newObj)
	if err != nil {
		return fwk.Queue, fmt.Errorf("%s: namespace event: %w", Name, err)
	}
	if newNS.GetName() != pod.Namespace || pl.exempt(pod) {
		return fwk.QueueSkip, nil
	}
	before := pl.rulesWith(pod, labels.Set(oldNS.GetLabels()))
	after := pl.rulesWith(pod, labels.Set(newNS.GetLabels()))
	if sameRequired(before, after) {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Namespace labels changed the placement rules of the pod", "pod", klog.KObj(pod), "before", before, "after", after)
	return fwk.Queue, nil
}

// sameRequired reports whether a and b hold the same Require rules. Rules
// keep the order of the args, so comparing in order is enough.
func sameRequired(a, b *podRules) bool {
	var ra, rb []*rule
	if a != nil {
		ra = a.required
	}
	if b != nil {
		rb = b.required
	}
	return slices.Equal(ra, rb)
}
