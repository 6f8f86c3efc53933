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

package window

import (
	v1 "k8s.io/api/core/v1"
)

// The node lifecycle conditions of Kubernetes 1.37 (alpha, feature gate
// NodeLifecycleConditions). They are plain condition types: the API server
// stores any type on every minor, and k8s.io/api before 0.37 has no
// constants for them, so these are ours.
const (
	ConditionDrainInProgress       v1.NodeConditionType = "DrainInProgress"
	ConditionDrained               v1.NodeConditionType = "Drained"
	ConditionMaintenancePlanned    v1.NodeConditionType = "MaintenancePlanned"
	ConditionMaintenanceInProgress v1.NodeConditionType = "MaintenanceInProgress"
)

// The windows of the conditions, one for every node that has the condition
// True: open since ever, never ending. They are shared, as the parse
// cache's are, and never changed.
var (
	drainInProgressWindows       = []Window{{End: Unbounded, Signal: SignalDrainInProgress}}
	drainedWindows               = []Window{{End: Unbounded, Signal: SignalDrained}}
	maintenanceInProgressWindows = []Window{{End: Unbounded, Signal: SignalMaintenanceInProgress}}
	plannedWindows               = []Window{{End: Unbounded, Signal: SignalMaintenancePlanned}}
	plannedScoreWindows          = []Window{{End: Unbounded, Signal: SignalMaintenancePlannedScore}}
)

// conditionOf returns the condition that announces windows of s.
func conditionOf(s Signal) v1.NodeConditionType {
	switch s {
	case SignalDrainInProgress:
		return ConditionDrainInProgress
	case SignalDrained:
		return ConditionDrained
	case SignalMaintenanceInProgress:
		return ConditionMaintenanceInProgress
	}
	return ConditionMaintenancePlanned
}

// conditionWindows returns the windows of a condition of type t that is
// True, nil when t is no lifecycle condition. plannedScore is
// plannedWithoutTime Score.
func conditionWindows(t v1.NodeConditionType, plannedScore bool) []Window {
	switch t {
	case ConditionDrainInProgress:
		return drainInProgressWindows
	case ConditionDrained:
		return drainedWindows
	case ConditionMaintenanceInProgress:
		return maintenanceInProgressWindows
	case ConditionMaintenancePlanned:
		if plannedScore {
			return plannedScoreWindows
		}
		return plannedWindows
	}
	return nil
}

// hasLifecycleCondition reports whether node has a lifecycle condition
// that is True. It reads the few conditions a node has without allocating.
func hasLifecycleCondition(node *v1.Node) bool {
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Status == v1.ConditionTrue && conditionWindows(c.Type, false) != nil {
			return true
		}
	}
	return false
}
