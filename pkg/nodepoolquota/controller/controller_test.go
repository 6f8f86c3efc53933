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

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

var inPool = map[string]string{"pool": "gpu"}

// poolCluster is two pool nodes, one general node, and team-a's
// namespace a under a quota of limit GPUs in the pool.
func poolCluster(limit int64) []runtime.Object {
	return []runtime.Object{
		node("gpu-1", map[string]string{"pool": "gpu", "type": "h100"}),
		node("gpu-2", map[string]string{"pool": "gpu", "type": "h100"}),
		node("general", map[string]string{"pool": "general"}),
		namespace("a", nil), namespace("b", nil),
		npq("gpu", inPool, "team-a", []string{"a"}, gpus(limit)),
	}
}

// TestBurst: 100 gated pods of 1 GPU against a quota of 10: exactly 10
// gates go, also when the next sync runs before the cache has seen the
// first lifts; the 90 others each get one Event and the status counts
// them. A bound pod that goes frees room for one more.
func TestBurst(t *testing.T) {
	objs := poolCluster(10)
	for i := range 100 {
		objs = append(objs, gatedPod("a", fmt.Sprintf("p-%03d", i), i, 1, withNodeSelector(inPool)))
	}
	h := newHarness(t, objs...)
	h.sync()
	// At once, on a cache that has not seen the lifts.
	h.sync()
	if got := h.podUpdates.Load(); got != 10 {
		t.Errorf("%d gates lifted on a stale cache, want 10", got)
	}
	h.settleAndSync()
	ungated := h.ungated("a")
	if len(ungated) != 10 || ungated[0] != "p-000" || ungated[9] != "p-009" {
		t.Fatalf("ungated %v, want the 10 oldest", ungated)
	}
	events := h.events()
	if len(events) != 90 {
		t.Errorf("%d events, want one for each of the 90 held pods", len(events))
	}
	if want := "Normal NodePoolQuotaExceeded Waiting for room in the node pool: team team-a uses 10 of 10 nvidia.com/gpu in pool gpu and the pod asks for 1"; len(events) == 0 || events[0] != want {
		t.Errorf("first event %q, want %q", first(events), want)
	}
	st := h.quota("gpu").Status
	if st.HeldPods != 90 || len(st.Teams) != 1 || st.Teams[0].Held != 90 || st.Nodes != 2 || st.TeamCount != 1 || st.ObservedGeneration != 1 {
		t.Errorf("status %+v, want 90 held of team-a, 2 nodes", st)
	}
	if c := meta.FindStatusCondition(st.Conditions, ConditionAtLimit); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "team team-a has 90 pods held") {
		t.Errorf("AtLimit %+v, want True naming team-a", c)
	}

	// Bound, the lifted pods move from reserved to used: nothing changes.
	for i := range 3 {
		h.bind("a", fmt.Sprintf("p-%03d", i), "gpu-1")
	}
	h.settleAndSync()
	if got := h.podUpdates.Load(); got != 10 {
		t.Errorf("%d gates lifted after 3 pods were bound, want still 10", got)
	}
	if used := h.quota("gpu").Status.Teams[0].Used[gpu]; used.Value() != 3 {
		t.Errorf("used %s, want 3", used.String())
	}
	h.deletePod("a", "p-000")
	h.settleAndSync()
	if ungated := h.ungated("a"); !slices.Contains(ungated, "p-010") || len(ungated) != 8 {
		t.Errorf("after a bound pod went: ungated %v, want p-003..p-010", ungated)
	}
	if got := h.quota("gpu").Status.HeldPods; got != 89 {
		t.Errorf("held %d, want 89", got)
	}
	if events := h.events(); len(events) != 0 {
		t.Errorf("%d more events for pods already told, want none: %q", len(events), events)
	}
}

// TestOtherGatesUntouched: lifting removes our gate only, and keeps the
// others in their order.
func TestOtherGatesUntouched(t *testing.T) {
	objs := append(poolCluster(10), gatedPod("a", "p", 0, 1, withNodeSelector(inPool), withGates("x.io/first", v1alpha1.SchedulingGate, "y.io/last")))
	h := newHarness(t, objs...)
	h.sync()
	var got []string
	for _, g := range h.pod("a", "p").Spec.SchedulingGates {
		got = append(got, g.Name)
	}
	if want := []string{"x.io/first", "y.io/last"}; !slices.Equal(got, want) {
		t.Errorf("gates %v, want %v", got, want)
	}
}

// TestNotPoolBound: with the pool full, a pod that may land outside it
// (no selection, or one that matches the general node too) loses its gate
// at once; one whose selection reaches only pool nodes (by the pool's
// label, an In affinity on it, or another label only pool nodes carry)
// waits. A pod of no team, and a gated pod of a team of no quota, go at
// once.
func TestNotPoolBound(t *testing.T) {
	objs := poolCluster(1)
	objs = append(objs,
		gatedPod("a", "bound", 0, 1, withNodeSelector(inPool)),
		gatedPod("a", "free", 1, 1),
		gatedPod("a", "pool-or-general", 2, 1, withAffinityIn("pool", "gpu", "general")),
		gatedPod("a", "by-affinity", 3, 1, withAffinityIn("pool", "gpu")),
		gatedPod("a", "by-type", 4, 1, withNodeSelector(map[string]string{"type": "h100"})),
		gatedPod("a", "no-gpu", 5, 0, withNodeSelector(inPool)),
		gatedPod("b", "other-team", 6, 1, withNodeSelector(inPool)),
	)
	h := newHarness(t, objs...)
	h.sync()
	ungated := h.ungated("a")
	slices.Sort(ungated)
	if want := []string{"bound", "free", "no-gpu", "pool-or-general"}; !slices.Equal(ungated, want) {
		t.Errorf("ungated %v, want %v (by-affinity and by-type are pool-bound and the pool is full)", ungated, want)
	}
	if got := h.ungated("b"); !slices.Equal(got, []string{"other-team"}) {
		t.Errorf("namespace b: ungated %v, want other-team", got)
	}
	if st := h.quota("gpu").Status; st.HeldPods != 2 {
		t.Errorf("held %d, want 2", st.HeldPods)
	}
}

// TestLoweredLimit: a limit lowered below what bound pods use evicts
// nothing; the status says overLimit and new pods wait.
func TestLoweredLimit(t *testing.T) {
	objs := poolCluster(5)
	for i := range 5 {
		p := gatedPod("a", fmt.Sprintf("run-%d", i), i, 1, withNodeSelector(inPool), withGates())
		p.Spec.NodeName = "gpu-1"
		objs = append(objs, p)
	}
	objs = append(objs, gatedPod("a", "new", 10, 1, withNodeSelector(inPool)))
	h := newHarness(t, objs...)
	h.sync()
	q := h.quota("gpu")
	if st := q.Status; st.HeldPods != 1 || len(st.Teams[0].OverLimit) != 0 {
		t.Fatalf("at 5 of 5: status %+v, want 1 held, not over", st)
	}
	q.Spec.Teams[0].Limits = gpus(3)
	q.Generation = 2
	if _, err := h.npq.SchedulingV1alpha1().NodePoolQuotas().Update(h.ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settleAndSync()
	for _, a := range h.client.Actions() {
		if a.GetVerb() == "delete" || a.GetSubresource() == "eviction" {
			t.Errorf("the controller %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	st := h.quota("gpu").Status
	used := st.Teams[0].Used[gpu]
	if !slices.Equal(st.Teams[0].OverLimit, []v1.ResourceName{gpu}) || used.Value() != 5 || st.HeldPods != 1 || st.ObservedGeneration != 2 {
		t.Errorf("limit lowered to 3: status %+v, want used 5, overLimit [nvidia.com/gpu], 1 held, generation 2", st)
	}
	if h.ungated("a") != nil {
		t.Errorf("ungated %v, want none", h.ungated("a"))
	}
}

// TestTwoQuotas: a pod under two quotas goes only when both let it: the
// zone quota's cpu limit holds 3 of 5 pods that the GPU quota would let
// through, and the GPU quota reserves only the 2 lifted.
func TestTwoQuotas(t *testing.T) {
	objs := poolCluster(10)
	zone := npq("zone-x", map[string]string{"type": "h100"}, "team-a", []string{"a"}, v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")})
	objs = append(objs, zone)
	for i := range 5 {
		objs = append(objs, gatedPod("a", fmt.Sprintf("p-%d", i), i, 1, withNodeSelector(inPool), withCPU("1")))
	}
	h := newHarness(t, objs...)
	h.settleAndSync()
	if got := h.ungated("a"); !slices.Equal(got, []string{"p-0", "p-1"}) {
		t.Errorf("ungated %v, want p-0 p-1", got)
	}
	if st := h.quota("zone-x").Status; st.HeldPods != 3 {
		t.Errorf("zone-x holds %d, want 3", st.HeldPods)
	}
	if st := h.quota("gpu").Status; st.HeldPods != 0 {
		t.Errorf("gpu holds %d, want 0: zone-x holds them", st.HeldPods)
	}
	events := h.events()
	if len(events) != 3 || !strings.Contains(events[0], "team team-a uses 2 of 2 cpu in pool zone-x and the pod asks for 1") {
		t.Errorf("events %q, want 3 naming zone-x's cpu", events)
	}
}

// TestConditions: a pool of no node says so; an invalid quota (a selector
// Compile refuses, a namespace in two teams, which only the validation
// package sees) holds no pod and says why; a status that did not change is
// not written again.
func TestConditions(t *testing.T) {
	bad := npq("bad", inPool, "team-b", []string{"b"}, gpus(0))
	bad.Spec.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "pool", Operator: "Near"}}
	dup := npq("dup", inPool, "team-c", []string{"c"}, gpus(0))
	dup.Spec.Teams = append(dup.Spec.Teams, v1alpha1.TeamQuota{Name: "team-d", Namespaces: []string{"c"}, Limits: gpus(0)})
	h := newHarness(t,
		node("general", map[string]string{"pool": "general"}), namespace("a", nil), namespace("b", nil), namespace("c", nil),
		npq("gpu", inPool, "team-a", []string{"a"}, gpus(1)), bad, dup, gatedPod("c", "p", 0, 1, withNodeSelector(inPool)),
		gatedPod("b", "p", 0, 1, withNodeSelector(inPool)))
	h.sync()
	st := h.quota("gpu").Status
	if c := meta.FindStatusCondition(st.Conditions, ConditionNodesSelected); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonNoNodes || c.Message != NoNodesMessage {
		t.Errorf("NodesSelected %+v, want False NoNodes", c)
	}
	st = h.quota("bad").Status
	if c := meta.FindStatusCondition(st.Conditions, ConditionValid); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.nodeSelector") {
		t.Errorf("Valid %+v, want False naming spec.nodeSelector", c)
	}
	st = h.quota("dup").Status
	if c := meta.FindStatusCondition(st.Conditions, ConditionValid); c == nil || c.Status != metav1.ConditionFalse ||
		!strings.Contains(c.Message, "spec.teams[1].namespaces[0]") || !strings.Contains(c.Message, "no pod is held for this quota") {
		t.Errorf("Valid %+v, want False naming spec.teams[1].namespaces[0]", c)
	}
	for _, ns := range []string{"b", "c"} {
		if got := h.ungated(ns); len(got) != 1 {
			t.Errorf("the pod of an invalid quota's team in %s: ungated %v, want it", ns, got)
		}
	}
	writes := func() (n int) {
		for _, a := range h.npq.Actions() {
			if a.GetVerb() == "update" && a.GetSubresource() == "status" {
				n++
			}
		}
		return n
	}
	before := writes()
	h.settleAndSync()
	if after := writes(); after != before {
		t.Errorf("%d status writes by a sync that changed nothing", after-before)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestConflictRetried: a lift that loses a race fails the sync, which the
// queue retries; the retry lifts the pod, and no other.
func TestConflictRetried(t *testing.T) {
	objs := append(poolCluster(1), gatedPod("a", "first", 0, 1, withNodeSelector(inPool)), gatedPod("a", "second", 1, 1, withNodeSelector(inPool)))
	h := newHarness(t, objs...)
	h.conflictNext.Store(true)
	if err := h.ctl.sync(h.ctx); err == nil || !strings.Contains(err.Error(), "lifting the gate of pod a/first") {
		t.Fatalf("sync on a conflict: %v, want an error naming a/first", err)
	}
	h.settleAndSync()
	if got := h.ungated("a"); !slices.Equal(got, []string{"first"}) {
		t.Errorf("after the retry: ungated %v, want first", got)
	}
}

// TestMetrics: used, limit and held per pool and team, cpu in cores; a
// deleted quota's series go.
func TestMetrics(t *testing.T) {
	objs := poolCluster(2)
	cpuQuota := npq("cpu-pool", inPool, "team-a", []string{"a"}, v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")})
	objs = append(objs, cpuQuota)
	for i := range 3 {
		p := gatedPod("a", fmt.Sprintf("run-%d", i), i, 1, withNodeSelector(inPool), withGates(), withCPU("500m"))
		p.Spec.NodeName = "gpu-1"
		objs = append(objs, p)
	}
	objs = append(objs, gatedPod("a", "held", 9, 1, withNodeSelector(inPool), withCPU("1")))
	h := newHarness(t, objs...)
	h.sync()
	gauge := func(g interface{ Get() (float64, error) }) float64 {
		v, err := g.Get()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, m := range []struct {
		name string
		got  float64
		want float64
	}{
		{"used gpu", gauge(gaugeOf(usedGauge, "gpu", "team-a", "nvidia.com/gpu")), 3},
		{"limit gpu", gauge(gaugeOf(limitGauge, "gpu", "team-a", "nvidia.com/gpu")), 2},
		{"used cpu", gauge(gaugeOf(usedGauge, "cpu-pool", "team-a", "cpu")), 1.5},
		{"limit cpu", gauge(gaugeOf(limitGauge, "cpu-pool", "team-a", "cpu")), 1.5},
		{"held gpu", gauge(gaugeOf(heldGauge, "gpu", "team-a")), 1},
		{"held cpu-pool", gauge(gaugeOf(heldGauge, "cpu-pool", "team-a")), 1},
	} {
		if m.got != m.want {
			t.Errorf("%s: %v, want %v", m.name, m.got, m.want)
		}
	}
	if err := h.npq.SchedulingV1alpha1().NodePoolQuotas().Delete(h.ctx, "cpu-pool", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settleAndSync()
	for _, name := range []string{"nodepoolquota_used", "nodepoolquota_limit", "nodepoolquota_held_pods"} {
		// Other tests' controllers leave their pools' series (zone-x).
		if pools := seriesPools(t, name); slices.Contains(pools, "cpu-pool") || !slices.Contains(pools, "gpu") {
			t.Errorf("%s has series of pools %v after cpu-pool went, want gpu's and not cpu-pool's", name, pools)
		}
	}
}

// seriesPools are the pool labels of the series of the metric name.
func seriesPools(t *testing.T, name string) []string {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var pools []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "pool" {
					pools = append(pools, l.GetValue())
				}
			}
		}
	}
	return pools
}

// gaugeOf reads a child of a gauge vec.
func gaugeOf(vec *metrics.GaugeVec, labels ...string) interface{ Get() (float64, error) } {
	return gaugeReader{vec.WithLabelValues(labels...)}
}

type gaugeReader struct{ g metrics.GaugeMetric }

func (r gaugeReader) Get() (float64, error) { return testutil.GetGaugeMetricValue(r.g) }
