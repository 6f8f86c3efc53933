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
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// EventsToRegister returns the events that can make a pod this plugin
// rejected schedulable, each with a hint that queues the pod only when the
// change helps it: a node that now matches its Require rules, or a change of
// the pod's labels that changes which rules apply. A change of a namespace's
// labels is no framework event: see watchNamespaces.
func (pl *PlacementPolicy) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: ownPodResource, ActionType: fwk.UpdatePodLabel}, QueueingHintFn: pl.isSchedulableAfterPodLabelChange},
	}, nil
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
	if s.empty() || len(s.Required) == 0 {
		// The rules that rejected the pod no longer apply to it.
		return fwk.Queue, nil
	}
	if ok, rule := s.Admits(newNode); !ok {
		logger.V(5).Info("Node does not match a placement rule of the pod", "pod", klog.KObj(pod), "node", klog.KObj(newNode), "rule", rule)
		return fwk.QueueSkip, nil
	}
	if oldNode, isNode := oldObj.(*v1.Node); isNode && oldNode != nil {
		if ok, _ := s.Admits(oldNode); ok {
			// It matched before: this update is not what the pod waits for.
			return fwk.QueueSkip, nil
		}
	}
	logger.V(5).Info("Node now matches the placement rules of the pod", "pod", klog.KObj(pod), "node", klog.KObj(newNode))
	return fwk.Queue, nil
}

// isSchedulableAfterPodLabelChange queues the pod when its new labels drop
// one of the Require rules that applied to it. Where the event is not
// limited to the pod itself (fwk.Pod before 1.37), another pod's label
// change must not requeue it: only the pod's own labels select its rules.
func (pl *PlacementPolicy) isSchedulableAfterPodLabelChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldPod, okOld := oldObj.(*v1.Pod)
	newPod, okNew := newObj.(*v1.Pod)
	if !okOld || !okNew {
		return fwk.Queue, fmt.Errorf("%s: want two *v1.Pod, got %T and %T", Name, oldObj, newObj)
	}
	if newPod.UID != pod.UID {
		return fwk.QueueSkip, nil
	}
	before, err := pl.rulesFor(oldPod)
	if err != nil {
		return fwk.Queue, err
	}
	after, err := pl.rulesFor(newPod)
	if err != nil {
		return fwk.Queue, err
	}
	if !dropsRequired(before, after) {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("Pod labels changed its placement rules", "pod", klog.KObj(pod), "before", before, "after", after)
	return fwk.Queue, nil
}

// watchNamespaces reads namespace labels from the scheduler's namespace
// informer and retries the pending pods of a namespace whose new labels
// free them from a Require rule.
//
// A namespace change cannot go through EventsToRegister: the framework has
// no Namespace resource, and routing one through its dynamic informers
// (resource "namespaces.v1.") races with this typed informer, whose cache
// PreFilter reads. A retry could then run on the old labels and reject the
// pod again, with no event left to requeue it (seen in CI). The handler
// below runs after this informer's cache holds the new labels, so the retry
// it triggers sees them.
func (pl *PlacementPolicy) watchNamespaces(logger klog.Logger, h fwk.Handle) error {
	if h == nil || h.SharedInformerFactory() == nil {
		return fmt.Errorf("%s needs the scheduler's informers to read namespace labels", Name)
	}
	informers := h.SharedInformerFactory().Core().V1()
	pl.namespaces = informers.Namespaces().Lister()
	pl.pods = informers.Pods().Lister()
	pl.activator = h
	_, err := informers.Namespaces().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj interface{}) { pl.namespaceUpdated(logger, oldObj, newObj) },
	})
	return err
}

// namespaceUpdated activates the unscheduled pods of the namespace that the
// label change frees from a Require rule. Activate ignores pods that are
// not waiting in this scheduler's queue.
func (pl *PlacementPolicy) namespaceUpdated(logger klog.Logger, oldObj, newObj interface{}) {
	oldNS, okOld := oldObj.(*v1.Namespace)
	newNS, okNew := newObj.(*v1.Namespace)
	if !okOld || !okNew || maps.Equal(oldNS.Labels, newNS.Labels) {
		return
	}
	pods, err := pl.pods.Pods(newNS.Name).List(labels.Everything())
	if err != nil {
		logger.Error(err, "Listing the pods of a relabelled namespace", "namespace", klog.KObj(newNS))
		return
	}
	retry := map[string]*v1.Pod{}
	for _, pod := range pods {
		if pod.Spec.NodeName != "" || pl.rules.Exempt(pod) {
			continue
		}
		before := pl.rulesWith(pod, labels.Set(oldNS.Labels))
		after := pl.rulesWith(pod, labels.Set(newNS.Labels))
		if dropsRequired(before, after) {
			retry[pod.Namespace+"/"+pod.Name] = pod
		}
	}
	if len(retry) > 0 {
		logger.V(4).Info("Namespace labels changed the placement rules of pending pods", "namespace", klog.KObj(newNS), "pods", len(retry))
		pl.activator.Activate(logger, retry)
	}
}

// dropsRequired reports whether after lacks a Require rule of before: only
// then can a pod rejected under before fit more nodes. Gaining rules only
// narrows its nodes.
func dropsRequired(before, after *podRules) bool {
	if before == nil {
		return false
	}
	for _, r := range before.Required {
		if after == nil || !slices.Contains(after.Required, r) {
			return true
		}
	}
	return false
}
