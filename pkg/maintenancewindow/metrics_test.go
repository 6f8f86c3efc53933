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
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/metricstest"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// retryCounts reads the retry counters and gauge of profile.
func retryCounts(t *testing.T, profile string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, name := range []string{"retries_planned_total", "retries_fired_total", "retries_dropped_total", "pending_retries"} {
		for _, v := range metricstest.Samples(t, "maintenancewindow_"+name, profile, "") {
			got[name] = v
		}
	}
	return got
}

// TestRetryMetrics plans, fires and drops retries and checks the counters
// after each step: planned = fired + dropped + pending.
func TestRetryMetrics(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	nodes := []*v1.Node{node("a", interval(-1, 1)), node("b", interval(-1, 2))}
	pl, clk, h := newPlugin(t, defaultArgs(nil), nodes...)
	profile := h.profile
	want := func(step string, planned, fired, dropped, pending float64) {
		t.Helper()
		w := map[string]float64{"retries_planned_total": planned, "retries_fired_total": fired,
			"retries_dropped_total": dropped, "pending_retries": pending}
		if diff := cmp.Diff(w, retryCounts(t, profile)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step, diff)
		}
	}
	want("at start", 0, 0, 0, 0)

	p1, p2, p3 := pendingPod("p1"), pendingPod("p2"), pendingPod("p3")
	for _, p := range []*v1.Pod{p1, p2, p3} {
		h.addPod(t, p)
		reject(t, ctx, pl, p, false, nodes)
	}
	// A second rejection of p1 keeps its entry: not a new retry.
	reject(t, ctx, pl, p1, false, nodes)
	want("three pods rejected, one twice", 3, 0, 0, 3)

	if err := h.client.CoreV1().Pods("default").Delete(ctx, p3.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(func() bool { return pl.pendingRetries() == 2 }); err != nil {
		t.Fatal("the deleted pod's retry was not dropped")
	}
	want("one pod deleted", 3, 0, 1, 2)

	waitArmed(t, pl, now.Add(time.Hour))
	clk.Step(time.Hour)
	if err := waitFor(func() bool { return len(h.activations()) == 2 }); err != nil {
		t.Fatalf("activated %v, want p1 and p2", h.activations())
	}
	want("the window ended", 3, 2, 1, 0)
}

// nodeStateArgs avoids nodes whose window opens within an hour and ranks
// lower those whose window opens within a day.
func nodeStateArgs() *config.MaintenanceWindowArgs {
	return defaultArgs(func(a *config.MaintenanceWindowArgs) {
		a.AvoidWithin = metav1.Duration{Duration: time.Hour}
		a.Horizon = metav1.Duration{Duration: 24 * time.Hour}
	})
}

// addNodes creates nodes through the fake API and waits until the node
// informer holds them, as the scheduler's does.
func (h *fakeHandle) addNodes(t *testing.T, nodes ...*v1.Node) {
	t.Helper()
	for _, n := range nodes {
		if _, err := h.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lister := h.informers.Core().V1().Nodes().Lister()
	if err := waitFor(func() bool {
		for _, n := range nodes {
			if _, err := lister.Get(n.Name); err != nil {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal("the node informer never saw the nodes")
	}
}

// TestNodesMetric checks the at-scrape node gauge against the plugin's own
// clock and args, before and after the clock moves.
func TestNodesMetric(t *testing.T) {
	_, clk, h := newPlugin(t, nodeStateArgs())
	h.addNodes(t,
		node("open", interval(-1, 2)),
		node("avoided", interval(0.5, 3)),
		node("upcoming", interval(5, 6)),
		node("at-horizon", interval(24, 25)),
		node("far", interval(48, 49)),
		node("past", interval(-3, -2)),
		node("invalid", "tomorrow"),
		node("none", ""),
	)
	tests := []struct {
		step time.Duration
		want map[string]float64
	}{
		{step: 0, want: map[string]float64{"open annotation": 1, "avoided annotation": 1, "upcoming annotation": 1, "invalid annotation": 1}},
		// At +2.5h: "open" is over, "avoided" open, and "at-horizon"
		// opens within the horizon; "upcoming" is 2.5h away.
		{step: 2*time.Hour + 30*time.Minute, want: map[string]float64{"open annotation": 1, "upcoming annotation": 2, "invalid annotation": 1}},
		// At +4.5h: "upcoming" opens within avoidWithin.
		{step: 2 * time.Hour, want: map[string]float64{"avoided annotation": 1, "upcoming annotation": 1, "invalid annotation": 1}},
	}
	for _, tc := range tests {
		clk.Step(tc.step)
		if diff := cmp.Diff(tc.want, nodeSamples(t, h.profile)); diff != "" {
			t.Errorf("after %v, maintenancewindow_nodes (-want +got):\n%s", clk.Since(now), diff)
		}
	}
}

// nodeSamples reads maintenancewindow_nodes of profile, keyed "state
// source", leaving out the zeros. It fails the test unless profile has no
// sample or exactly the fixed set: every state by every source, invalid
// only for the sources that parse values (14 series).
func nodeSamples(t *testing.T, profile string) map[string]float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, series := map[string]float64{}, 0
	for _, f := range families {
		if f.GetName() != "maintenancewindow_nodes" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["profile"] != profile {
				continue
			}
			series++
			if v := m.GetGauge().GetValue(); v != 0 {
				got[labels["state"]+" "+labels["source"]] = v
			}
		}
	}
	if series != 0 && series != 14 {
		t.Errorf("maintenancewindow_nodes has %d series for profile %q, want 14", series, profile)
	}
	return got
}

// TestNodesMetricBySource: a node counts once per source that puts it in a
// state, each source judged alone; MaintenancePlanned gives way to a time
// of the annotation; switched off, a source counts nothing.
func TestNodesMetricBySource(t *testing.T) {
	gkeAt := func(h float64) string {
		return strconv.FormatInt(now.Add(time.Duration(h*float64(time.Hour))).Unix(), 10)
	}
	claims := claimsByNode{
		"expiring": {Name: "nc-1", ExpiresAt: now.Add(30 * time.Minute)},
		"later":    {Name: "nc-2", ExpiresAt: now.Add(7 * time.Hour)},
		"drifted":  {Name: "nc-3", Drifted: true},
	}
	nodes := func() []*v1.Node {
		return []*v1.Node{
			node("annotated", interval(-1, 2)),
			gkeNode("gke", gkeAt(2), ""),
			gkeNode("gke-and-bad-annotation", gkeAt(-0.5), "tomorrow"),
			gkeNode("gke-and-annotation", gkeAt(3), interval(0.5, 1)),
			conditionNode("draining", "", window.ConditionDrainInProgress),
			conditionNode("drained", "", window.ConditionDrained),
			conditionNode("in-maintenance", "", window.ConditionMaintenanceInProgress),
			conditionNode("planned", "", window.ConditionMaintenancePlanned),
			conditionNode("planned-tonight", interval(12, 14), window.ConditionMaintenancePlanned),
			conditionNode("draining-annotated", interval(-1, 2), window.ConditionDrainInProgress),
			node("expiring", ""),
			node("later", ""),
			node("drifted", ""),
			node("none", ""),
		}
	}
	tests := []struct {
		name string
		args func(*config.MaintenanceWindowArgs)
		want map[string]float64
	}{{
		name: "every source",
		want: map[string]float64{
			// annotated, draining-annotated; gke-and-annotation.
			"open annotation": 2, "avoided annotation": 1,
			// planned-tonight: the annotation's time wins.
			"upcoming annotation": 1,
			"invalid annotation":  1,
			// gke-and-bad-annotation; gke; gke-and-annotation.
			"open gke-label": 1, "upcoming gke-label": 2,
			// draining, drained, in-maintenance, planned, draining-annotated.
			"open node-condition": 5,
			// drifted; expiring; later.
			"open karpenter": 1, "avoided karpenter": 1, "upcoming karpenter": 1,
		},
	}, {
		name: "plannedWithoutTime Score",
		args: func(a *config.MaintenanceWindowArgs) { a.PlannedWithoutTime = config.PlannedScore },
		want: map[string]float64{
			"open annotation": 2, "avoided annotation": 1, "upcoming annotation": 1, "invalid annotation": 1,
			"open gke-label": 1, "upcoming gke-label": 2,
			"open node-condition": 4, "upcoming node-condition": 1,
			"open karpenter": 1, "avoided karpenter": 1, "upcoming karpenter": 1,
		},
	}, {
		name: "signals off",
		args: func(a *config.MaintenanceWindowArgs) {
			a.ProviderSignals, a.NodeConditions, a.Karpenter = false, false, false
		},
		want: map[string]float64{"open annotation": 2, "avoided annotation": 1, "upcoming annotation": 1, "invalid annotation": 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := nodeStateArgs()
			if tc.args != nil {
				tc.args(args)
			}
			pl, _, h := newPlugin(t, args)
			pl.check.SetNodeClaims(claims)
			h.addNodes(t, nodes()...)
			if diff := cmp.Diff(tc.want, nodeSamples(t, h.profile)); diff != "" {
				t.Errorf("maintenancewindow_nodes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInstancesSumAndLeave: instances of one profile are summed into one
// sample per label set, and an instance leaves when its scheduler's context
// is done; with none left, the profile has no sample.
func TestInstancesSumAndLeave(t *testing.T) {
	_, base := ktesting.NewTestContext(t)
	profile := uniqueProfile(t)
	ctxA, cancelA := context.WithCancel(base)
	ctxB, cancelB := context.WithCancel(base)
	defer cancelA()
	defer cancelB()
	a, _, ha := newPluginProfile(t, ctxA, profile, nodeStateArgs())
	b, _, hb := newPluginProfile(t, ctxB, profile, nodeStateArgs())
	ha.addNodes(t, node("open", interval(-1, 2)), node("invalid", "x"))
	hb.addNodes(t, node("open", interval(-1, 2)), node("upcoming", interval(5, 6)))
	nodes := []*v1.Node{node("open", interval(-1, 2))}
	for _, p := range []*v1.Pod{pendingPod("p1"), pendingPod("p2")} {
		hb.addPod(t, p)
		_, ctx := ktesting.NewTestContext(t)
		reject(t, ctx, b, p, false, nodes)
	}
	pending := func() map[string]float64 {
		return metricstest.Samples(t, "maintenancewindow_pending_retries", profile, "")
	}
	states := func() map[string]float64 { return nodeSamples(t, profile) }

	if diff := cmp.Diff(map[string]float64{"open annotation": 2, "upcoming annotation": 1, "invalid annotation": 1}, states()); diff != "" {
		t.Errorf("two instances, maintenancewindow_nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"": 2}, pending()); diff != "" {
		t.Errorf("two instances, pending_retries (-want +got):\n%s", diff)
	}

	cancelB()
	<-retriesDone(b)
	if err := waitFor(func() bool { return states()["upcoming annotation"] == 0 }); err != nil {
		t.Fatalf("the stopped instance is still counted: %v", states())
	}
	if diff := cmp.Diff(map[string]float64{"open annotation": 1, "invalid annotation": 1}, states()); diff != "" {
		t.Errorf("one instance left, maintenancewindow_nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"": 0}, pending()); diff != "" {
		t.Errorf("one instance left, pending_retries (-want +got):\n%s", diff)
	}

	cancelA()
	<-retriesDone(a)
	if err := waitFor(func() bool { return len(pending()) == 0 }); err != nil {
		t.Errorf("no instance left, pending_retries: %v, want no sample", pending())
	}
	if got := states(); len(got) != 0 {
		t.Errorf("no instance left, maintenancewindow_nodes: %v, want no sample", got)
	}
}

// BenchmarkCountNodes is one scrape's count of 5,000 nodes, a tenth of them
// with signals: an annotation, a condition, or a GKE label next to an
// annotation (each value parsed alone).
func BenchmarkCountNodes(b *testing.B) {
	pl, _, _ := newPlugin(b, nodeStateArgs())
	var nodes []*v1.Node
	for i := range 5000 {
		name := "n" + strconv.Itoa(i)
		switch i % 40 {
		case 0, 1:
			nodes = append(nodes, node(name, interval(-1, 2)))
		case 2:
			nodes = append(nodes, conditionNode(name, "", window.ConditionDrainInProgress))
		case 3:
			nodes = append(nodes, gkeNode(name, strconv.FormatInt(now.Unix(), 10), interval(5, 6)))
		default:
			nodes = append(nodes, node(name, ""))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		counts := map[nodeKey]int{}
		var sc scratch
		for _, n := range nodes {
			pl.countNode(n, now, counts, &sc)
		}
	}
}
