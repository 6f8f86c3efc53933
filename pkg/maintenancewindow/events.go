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

package maintenancewindow

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// EventsToRegister returns the node events that can end a rejection: a node
// added, or a node's annotations changed (a window removed or moved), its
// labels when a source lives in labels (GKE's), or its conditions when the
// lifecycle conditions are read. The end of a window is no event: Filter
// plans that retry (see retry.go). NodeClaims are not watched: Karpenter's
// signals (expiry, drift, disruption) end with the node, and a pod kept off
// it is queued by the Add of the node that replaces it.
func (pl *MaintenanceWindow) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	actions := fwk.Add
	for _, src := range pl.sources.List() {
		if src.Where == window.InLabels {
			actions |= fwk.UpdateNodeLabel
		} else {
			actions |= fwk.UpdateNodeAnnotation
		}
	}
	if pl.sources.ReadsConditions() {
		// A lifecycle condition cleared (DrainInProgress, ...) ends a block
		// that has no known end, so no retry is planned for it.
		actions |= fwk.UpdateNodeCondition
	}
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: actions}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when the node does not block
// it now and blocked it before the change (or is new). A window that has
// not opened yet does not block a pod that ends before it, as in Filter.
// While the node still blocks the pod, the pod's retry is brought to the
// end of the window the node now shows, if that is earlier.
func (pl *MaintenanceWindow) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	newNode, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("%s: want a *v1.Node, got %T", Name, newObj)
	}
	now := pl.clock.Now()
	rt := pl.expectedRuntime(nil, pod)
	if until, blocked := pl.blocks(logger, newNode, now, rt); blocked {
		logger.V(5).Info("Node is still in a maintenance window", "pod", klog.KObj(pod), "node", klog.KObj(newNode), "until", until)
		// The pod stays unschedulable, so no later cycle's Filter plans a
		// retry from what this event shows: a window shortened here, or a
		// node added in its window. plan keeps an earlier retry.
		if pl.retries != nil && !window.IsUnbounded(until) {
			pl.retries.plan(logger, pod, until)
		}
		return fwk.QueueSkip, nil
	}
	if oldNode, isNode := oldObj.(*v1.Node); isNode && oldNode != nil {
		if _, blocked := pl.blocks(logger, oldNode, now, rt); !blocked {
			// Not blocked before either: the change is not what the pod waits for.
			return fwk.QueueSkip, nil
		}
	}
	logger.V(5).Info("Node is out of its maintenance window", "pod", klog.KObj(pod), "node", klog.KObj(newNode))
	return fwk.Queue, nil
}

// blocks reports whether node's windows keep a pod of runtime rt off it at
// now, and until when.
func (pl *MaintenanceWindow) blocks(logger klog.Logger, node *v1.Node, now time.Time, rt window.Runtime) (time.Time, bool) {
	_, until, blocked := pl.check.NodeBlocked(logger, node, now, func() window.Runtime { return rt })
	return until, blocked
}
