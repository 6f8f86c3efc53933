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

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// EventsToRegister returns the node events that can end a rejection: a node
// added, or a node's annotations changed (a window removed or moved). The
// end of a window is no event: Filter plans that retry (see retry.go).
func (pl *MaintenanceWindow) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAnnotation}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when the node is not blocked
// by a window now and was blocked before the change (or is new).
func (pl *MaintenanceWindow) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	newNode, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("%s: want a *v1.Node, got %T", Name, newObj)
	}
	now := pl.clock.Now()
	if _, until, blocked := blockedUntil(pl.nodeWindows(logger, newNode), now, pl.avoidWithin); blocked {
		logger.V(5).Info("Node is still in a maintenance window", "pod", klog.KObj(pod), "node", klog.KObj(newNode), "until", until)
		return fwk.QueueSkip, nil
	}
	if oldNode, isNode := oldObj.(*v1.Node); isNode && oldNode != nil {
		if _, _, blocked := blockedUntil(pl.nodeWindows(logger, oldNode), now, pl.avoidWithin); !blocked {
			// Not blocked before either: the change is not what the pod waits for.
			return fwk.QueueSkip, nil
		}
	}
	logger.V(5).Info("Node is out of its maintenance window", "pod", klog.KObj(pod), "node", klog.KObj(newNode))
	return fwk.Queue, nil
}
