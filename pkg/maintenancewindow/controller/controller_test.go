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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
)

// otherMarks gives a node another writer's taint and condition, which the
// controller must keep as they are.
func otherMarks(n *v1.Node) {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule})
	n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: "DrainInProgress", Status: v1.ConditionFalse, Reason: "Admin"})
}

// TestWindowOpensThenEnds: a node in its window gets the taint (with the
// marker) and MaintenanceInProgress, keeps its other taints and
// conditions, and loses both marks at the window's end, not a second
// before: the requeue at the end fires on the fake clock alone.
func TestWindowOpensThenEnds(t *testing.T) {
	h := newHarness(t, newNode("n1", interval(-time.Hour, time.Hour), otherMarks), newNode("calm", ""))
	h.start(defaultArgs(t))
	n := h.waitNode("n1", "tainted", hasOurTaint)
	n = h.waitNode("n1", "in progress", func(n *v1.Node) bool { return condition(n, ConditionMaintenanceInProgress) != nil })
	c := condition(n, ConditionMaintenanceInProgress)
	want := "window open from 2026-11-30T23:00:00Z until 2026-12-01T01:00:00Z (annotation)"
	if c.Status != v1.ConditionTrue || c.Reason != ReasonOpen || c.Message != want {
		t.Errorf("MaintenanceInProgress %s %s %q, want True %s %q", c.Status, c.Reason, c.Message, ReasonOpen, want)
	}
	if len(n.Spec.Taints) != 2 || n.Spec.Taints[0].Key != "gpu" || len(n.Status.Conditions) != 3 ||
		condition(n, "DrainInProgress").Reason != "Admin" || condition(n, string(v1.NodeReady)) == nil {
		t.Errorf("other taints or conditions changed: %+v %+v", n.Spec.Taints, n.Status.Conditions)
	}
	if calm := h.node("calm"); len(calm.Spec.Taints) != 0 || len(calm.Status.Conditions) != 1 {
		t.Errorf("a node without a window was marked: %+v", calm)
	}
	h.gauges("open", 1, 1)
	if ev := h.events(); len(ev) != 1 || !strings.Contains(ev[0], "Normal MaintenanceWindowOpened") {
		t.Errorf("events %q, want one MaintenanceWindowOpened", ev)
	}

	h.step(time.Hour - time.Second)
	time.Sleep(100 * time.Millisecond)
	if n := h.node("n1"); !hasOurTaint(n) {
		t.Fatal("the taint went before the window's end")
	}
	h.clk.Step(time.Second)
	n = h.waitNode("n1", "the marks removed", func(n *v1.Node) bool {
		return !hasOurTaint(n) && condition(n, ConditionMaintenanceInProgress) == nil
	})
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "gpu" || len(n.Status.Conditions) != 2 {
		t.Errorf("other taints or conditions removed: %+v %+v", n.Spec.Taints, n.Status.Conditions)
	}
	h.gauges("closed", 0, 0)
	h.waitFor("the closed event", func() bool {
		return slices.ContainsFunc(h.events(), func(e string) bool { return strings.Contains(e, "Normal MaintenanceWindowClosed") })
	})
}

// TestPlanned: a window within the planned-ahead time is MaintenancePlanned
// (no taint); one further away is planned from start - ahead on, by the
// requeue at that boundary.
func TestPlanned(t *testing.T) {
	h := newHarness(t, newNode("soon", interval(2*time.Hour, 3*time.Hour)), newNode("later", interval(5*time.Hour, 6*time.Hour)))
	c := h.start(defaultArgs(t), WithPlannedAhead(3*time.Hour))
	n := h.waitNode("soon", "planned", func(n *v1.Node) bool { return condition(n, ConditionMaintenancePlanned) != nil })
	cond := condition(n, ConditionMaintenancePlanned)
	want := "window opens at 2026-12-01T02:00:00Z until 2026-12-01T03:00:00Z (annotation)"
	if cond.Status != v1.ConditionTrue || cond.Reason != ReasonPlanned || cond.Message != want {
		t.Errorf("MaintenancePlanned %s %s %q, want True %s %q", cond.Status, cond.Reason, cond.Message, ReasonPlanned, want)
	}
	if hasOurTaint(n) || condition(n, ConditionMaintenanceInProgress) != nil {
		t.Errorf("a window 2h away marked open: %+v", n)
	}
	h.settle(c, "soon", "later")
	if condition(h.node("later"), ConditionMaintenancePlanned) != nil {
		t.Fatal("a window 5h away is planned with 3h ahead")
	}
	h.step(2 * time.Hour)
	h.waitNode("later", "planned 3h ahead", func(n *v1.Node) bool { return condition(n, ConditionMaintenancePlanned) != nil })
	h.waitNode("soon", "open and no longer planned", func(n *v1.Node) bool {
		return hasOurTaint(n) && condition(n, ConditionMaintenancePlanned) == nil
	})
}

// TestForeignMarksKept: an admin's MaintenanceInProgress (another reason)
// and an admin's taint of our key (another value) are neither overwritten
// nor removed, whether a window is open or over.
func TestForeignMarksKept(t *testing.T) {
	admin := metav1.NewTime(t0.Add(-48 * time.Hour))
	foreign := func(n *v1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: ConditionMaintenanceInProgress, Status: v1.ConditionTrue,
			Reason: "KernelUpgrade", Message: "by hand", LastTransitionTime: admin})
		n.Spec.Taints = []v1.Taint{{Key: TaintKey, Value: "admin", Effect: v1.TaintEffectNoSchedule}}
	}
	skips := func() float64 {
		v, _ := testutil.GetCounterMetricValue(foreignSkips.WithLabelValues("condition", ConditionMaintenanceInProgress))
		return v
	}
	before := skips()
	h := newHarness(t, newNode("open", interval(-time.Hour, time.Hour), foreign), newNode("none", "", foreign))
	c := h.start(defaultArgs(t))
	h.settle(c, "open", "none")
	h.step(2 * time.Hour)
	h.settle(c, "open", "none")
	for _, name := range []string{"open", "none"} {
		n := h.node(name)
		cond := condition(n, ConditionMaintenanceInProgress)
		if cond == nil || cond.Reason != "KernelUpgrade" || cond.Message != "by hand" || !cond.LastTransitionTime.Equal(&admin) {
			t.Errorf("%s: the admin's condition changed: %+v", name, cond)
		}
		if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Value != "admin" {
			t.Errorf("%s: the admin's taint changed: %+v", name, n.Spec.Taints)
		}
	}
	if ev := h.events(); len(ev) != 0 {
		t.Errorf("events %q for marks the controller did not set", ev)
	}
	if skips() == before {
		t.Error("foreign_owner_skips_total{condition,MaintenanceInProgress} did not count the admin's condition")
	}
}

// TestMalformedRemovesOnlyOurs: a malformed annotation announces nothing
// (and is logged): the controller's own marks from an earlier window go,
// the others stay.
func TestMalformedRemovesOnlyOurs(t *testing.T) {
	n := newNode("n1", "tomorrow/2026-12-01T04:00:00Z", otherMarks, func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: TaintKey, Value: TaintValue, Effect: v1.TaintEffectNoSchedule})
		n.Status.Conditions = append(n.Status.Conditions,
			v1.NodeCondition{Type: ConditionMaintenanceInProgress, Status: v1.ConditionTrue, Reason: ReasonOpen},
			v1.NodeCondition{Type: ConditionMaintenancePlanned, Status: v1.ConditionTrue, Reason: "Admin"})
	})
	h := newHarness(t, n)
	h.start(defaultArgs(t))
	n = h.waitNode("n1", "our marks removed", func(n *v1.Node) bool {
		return !hasOurTaint(n) && condition(n, ConditionMaintenanceInProgress) == nil
	})
	if c := condition(n, ConditionMaintenancePlanned); c == nil || c.Reason != "Admin" {
		t.Errorf("the admin's MaintenancePlanned changed: %+v", c)
	}
	if len(n.Spec.Taints) != 1 || condition(n, "DrainInProgress") == nil {
		t.Errorf("other marks removed: %+v %+v", n.Spec.Taints, n.Status.Conditions)
	}
	if !strings.Contains(h.logger.GetSink().(ktesting.Underlier).GetBuffer().String(), "Ignoring the node's maintenance windows") {
		t.Error("the malformed annotation was not logged")
	}
}

// gauges waits for the tainted and in-progress node counts (one controller
// runs at a time: the tests are not parallel).
func (h *harness) gauges(when string, tainted, inProgress float64) {
	h.t.Helper()
	var tn, ip float64
	h.waitFor(fmt.Sprintf("%s: nodes_tainted %v and nodes_with_condition{MaintenanceInProgress} %v", when, tainted, inProgress), func() bool {
		tn, _ = testutil.GetGaugeMetricValue(nodesTainted)
		ip, _ = testutil.GetGaugeMetricValue(nodesWithCondition.WithLabelValues(ConditionMaintenanceInProgress))
		return tn == tainted && ip == inProgress
	})
}

// TestConditionsAreNotInput: the node lifecycle conditions are the
// controller's output; an admin's DrainInProgress or MaintenancePlanned
// opens no window and plans none.
func TestConditionsAreNotInput(t *testing.T) {
	h := newHarness(t, newNode("n1", "", func(n *v1.Node) {
		n.Status.Conditions = append(n.Status.Conditions,
			v1.NodeCondition{Type: "DrainInProgress", Status: v1.ConditionTrue, Reason: "Admin"},
			v1.NodeCondition{Type: ConditionMaintenancePlanned, Status: v1.ConditionTrue, Reason: "Admin"})
	}))
	c := h.start(defaultArgs(t))
	h.settle(c, "n1")
	if n := h.node("n1"); len(n.Spec.Taints) != 0 || condition(n, ConditionMaintenanceInProgress) != nil {
		t.Errorf("conditions read as a window: %+v %+v", n.Spec.Taints, n.Status.Conditions)
	}
}
