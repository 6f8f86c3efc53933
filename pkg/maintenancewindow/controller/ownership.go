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
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownsCondition: the controller set c (its reason is one of ours).
func ownsCondition(c *v1.NodeCondition) bool { return slices.Contains(ownReasons, c.Reason) }

// ownsTaint: the controller set t (our key, effect and value).
func ownsTaint(t *v1.Taint) bool {
	return t.Key == TaintKey && t.Effect == v1.TaintEffectNoSchedule && t.Value == TaintValue
}

// ownsOpen: node carries the controller's mark of an open window, a taint
// or a MaintenanceInProgress condition; its change is an event.
func ownsOpen(node *v1.Node) bool {
	for i := range node.Spec.Taints {
		if ownsTaint(&node.Spec.Taints[i]) {
			return true
		}
	}
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type == ConditionMaintenanceInProgress && ownsCondition(c) {
			return true
		}
	}
	return false
}

// reconcileTaint returns node's taints with the controller's taint added
// (want) or removed. The API server keeps one taint per key and effect, so
// another writer's taint of our key and effect stays and ours is not added
// (refused). Taints are copied only when they change.
func reconcileTaint(have []v1.Taint, want bool) (out []v1.Taint, changed, refused bool) {
	ours, foreign := -1, false
	for i := range have {
		t := &have[i]
		switch {
		case ownsTaint(t):
			ours = i
		case t.Key == TaintKey && t.Effect == v1.TaintEffectNoSchedule:
			foreign = true
		}
	}
	switch {
	case want && ours >= 0:
		return have, false, false
	case want && foreign:
		return have, false, true
	case want:
		out = append(slices.Clone(have), v1.Taint{Key: TaintKey, Value: TaintValue, Effect: v1.TaintEffectNoSchedule})
		return out, true, false
	case ours >= 0:
		return slices.Delete(slices.Clone(have), ours, ours+1), true, false
	}
	return have, false, false
}

// wanted is one condition the plan asks for.
type wanted struct {
	typ             v1.NodeConditionType
	reason, message string
}

// wantedConditions lists the conditions p asks for, in a fixed order.
func wantedConditions(p *plan) []wanted {
	var out []wanted
	if p.open != nil {
		out = append(out, wanted{ConditionMaintenanceInProgress, ReasonOpen, p.open.describe("open from")})
	}
	if reason, msg, ok := p.plannedCondition(); ok {
		out = append(out, wanted{ConditionMaintenancePlanned, reason, msg})
	}
	return out
}

// reconcileConditions returns have with the wanted conditions set and the
// controller's other conditions removed. A condition of a wanted type that
// another writer set (another reason) is kept as it is, and its type is
// returned in refused. Conditions are copied only when they change.
func reconcileConditions(have []v1.NodeCondition, want []wanted, now metav1.Time) (out []v1.NodeCondition, changed bool, refused []v1.NodeConditionType) {
	out = have
	edit := func() {
		if !changed {
			out, changed = slices.Clone(have), true
		}
	}
	for i := len(out) - 1; i >= 0; i-- {
		c := out[i]
		w := slices.IndexFunc(want, func(w wanted) bool { return w.typ == c.Type })
		switch {
		case w < 0 && !ownsCondition(&c):
		case w < 0:
			edit()
			out = slices.Delete(out, i, i+1)
		case !ownsCondition(&c):
			refused = append(refused, c.Type)
		case c.Status != v1.ConditionTrue || c.Reason != want[w].reason || c.Message != want[w].message:
			edit()
			if c.Status != v1.ConditionTrue {
				out[i].LastTransitionTime = now
			}
			out[i].Status, out[i].Reason, out[i].Message, out[i].LastHeartbeatTime = v1.ConditionTrue, want[w].reason, want[w].message, now
		}
	}
	for _, w := range want {
		if slices.ContainsFunc(have, func(c v1.NodeCondition) bool { return c.Type == w.typ }) {
			continue
		}
		edit()
		out = append(out, v1.NodeCondition{Type: w.typ, Status: v1.ConditionTrue, Reason: w.reason, Message: w.message,
			LastHeartbeatTime: now, LastTransitionTime: now})
	}
	return out, changed, refused
}
