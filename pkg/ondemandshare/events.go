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

package ondemandshare

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/workload"
)

// EventsToRegister returns the events that can free a pod Filter held to
// on-demand nodes, each with a hint that queues it only when the change can
// help: a node that became on-demand (as upstream's NodeAffinity hints its
// node events), and a pod of the same workload deleted (fewer replicas may
// need fewer on-demand) or bound (more may be on-demand now).
func (pl *OnDemandShare) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add | fwk.Delete}, QueueingHintFn: pl.isSchedulableAfterPodChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when a node is added that is
// on-demand under its policy, or a node's labels made it on-demand.
func (pl *OnDemandShare) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	newNode, ok := newObj.(*v1.Node)
	if !ok || newNode == nil {
		return fwk.Queue, fmt.Errorf("%s: want a *v1.Node, got %T", Name, newObj)
	}
	p, _, err := pl.policyFor(pod)
	if err != nil {
		return fwk.Queue, err
	}
	if p == nil {
		// No policy holds the pod any more (relabelled, or decided).
		return fwk.Queue, nil
	}
	if c, _ := p.NodeClass(newNode); c != share.OnDemand {
		logger.V(5).Info("Node is not on-demand", "pod", klog.KObj(pod), "node", klog.KObj(newNode), "policy", p.Name)
		return fwk.QueueSkip, nil
	}
	if oldNode, isNode := oldObj.(*v1.Node); isNode && oldNode != nil {
		if c, _ := p.NodeClass(oldNode); c == share.OnDemand {
			// It was on-demand before: not what the pod waits for.
			return fwk.QueueSkip, nil
		}
	}
	logger.V(5).Info("Node became on-demand", "pod", klog.KObj(pod), "node", klog.KObj(newNode), "policy", p.Name)
	return fwk.Queue, nil
}

// isSchedulableAfterPodChange queues the pod when a pod of its workload is
// deleted, or is added bound or decided on-demand. An unbound pod added to
// the workload can only raise the minimum, and a spot one not the count.
func (pl *OnDemandShare) isSchedulableAfterPodChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	added, deleted := newObj != nil, newObj == nil
	obj := newObj
	if deleted {
		obj = oldObj
	}
	other, ok := obj.(*v1.Pod)
	if !ok || other == nil {
		return fwk.Queue, fmt.Errorf("%s: want a *v1.Pod, got %T", Name, obj)
	}
	if other.UID == pod.UID {
		return fwk.QueueSkip, nil
	}
	if added {
		class := share.Class(other.Labels[share.ClassLabel])
		if class == share.Spot || (class == "" && other.Spec.NodeName == "") {
			return fwk.QueueSkip, nil
		}
	}
	p, k, err := pl.policyFor(pod)
	if err != nil {
		return fwk.Queue, err
	}
	if p == nil {
		return fwk.Queue, nil
	}
	if !pl.sameWorkload(other, k) {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("A pod of the workload changed its on-demand count", "pod", klog.KObj(pod), "other", klog.KObj(other), "deleted", deleted)
	return fwk.Queue, nil
}

// sameWorkload reports whether other belongs to workload k. A deleted
// Deployment pod whose ReplicaSet is gone too is not recognised: the
// Deployment is being deleted or rolled over, and other events follow.
func (pl *OnDemandShare) sameWorkload(other *v1.Pod, k workload.Key) bool {
	if other.Namespace != k.Namespace {
		return false
	}
	got, ok := workload.Of(other, pl.replicaSet)
	return ok && got == k
}
