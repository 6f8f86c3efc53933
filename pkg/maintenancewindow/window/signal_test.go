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
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// fakeClaims is a map-backed NodeClaims, by node name, else by providerID.
type fakeClaims map[string]NodeClaim

func (f fakeClaims) ForNode(n *v1.Node) (NodeClaim, bool) {
	c, ok := f[n.Name]
	if !ok && n.Spec.ProviderID != "" {
		c, ok = f[n.Spec.ProviderID]
	}
	return c, ok
}

// signalArgs are testArgs with every source on and plannedWithoutTime
// planned ("": the default, Avoid).
func signalArgs(planned config.PlannedWithoutTime) *config.MaintenanceWindowArgs {
	a := testArgs()
	a.NodeConditions, a.Karpenter, a.PlannedWithoutTime = true, true, planned
	if planned == "" {
		a.PlannedWithoutTime = config.PlannedAvoid
	}
	return a
}

// withConditions adds conditions to n: each type True, or with "=False"
// appended, False.
func withConditions(n *v1.Node, types ...string) *v1.Node {
	n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue})
	for _, t := range types {
		status := v1.ConditionTrue
		if name, ok := strings.CutSuffix(t, "=False"); ok {
			t, status = name, v1.ConditionFalse
		}
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeConditionType(t), Status: status})
	}
	return n
}

// karpenterNode is a node Karpenter launched, announcing annotation in
// our key unless empty.
func karpenterNode(annotation string) *v1.Node {
	n := testNode(annotation, "")
	n.Labels[KarpenterNodePoolLabel] = "default"
	return n
}

func withProviderID(n *v1.Node, id string) *v1.Node {
	n.Spec.ProviderID = id
	return n
}

func hoursFromNow(h float64) time.Time { return now.Add(time.Duration(h * float64(time.Hour))) }

func TestSignalBlocks(t *testing.T) {
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	short := func() Runtime { return Runtime{D: 30 * time.Minute, Known: true} }
	long := func() Runtime { return Runtime{D: 3 * time.Hour, Known: true} }
	expiresIn := func(h float64) fakeClaims { return fakeClaims{"n": {Name: "nc", ExpiresAt: hoursFromNow(h)}} }
	tests := []struct {
		name      string
		node      *v1.Node
		claims    fakeClaims
		planned   config.PlannedWithoutTime
		edit      func(*config.MaintenanceWindowArgs)
		runtime   func() Runtime
		want      string // the reason; "" not blocked
		unbounded bool   // the end is Unbounded (else bounded, when blocked)
	}{
		{name: "no condition", node: withConditions(testNode("", ""))},
		{name: "DrainInProgress", node: withConditions(testNode("", ""), "DrainInProgress"),
			want: "node has condition DrainInProgress=True", unbounded: true},
		{name: "Drained", node: withConditions(testNode("", ""), "Drained"),
			want: "node has condition Drained=True", unbounded: true},
		{name: "MaintenanceInProgress", node: withConditions(testNode("", ""), "MaintenanceInProgress"),
			want: "node has condition MaintenanceInProgress=True", unbounded: true},
		{name: "Drained False", node: withConditions(testNode("", ""), "Drained=False")},
		{name: "an open condition spares no runtime", node: withConditions(testNode("", ""), "DrainInProgress"), runtime: short,
			want: "node has condition DrainInProgress=True", unbounded: true},
		{name: "conditions off", node: withConditions(testNode("", ""), "DrainInProgress", "Drained", "MaintenanceInProgress", "MaintenancePlanned"),
			edit: func(a *config.MaintenanceWindowArgs) { a.NodeConditions = false }},
		{name: "a condition in progress outlasts a timed window", node: withConditions(testNode(interval(-1, 1), ""), "Drained"),
			want: "node has condition Drained=True", unbounded: true},
		// MaintenancePlanned without a time.
		{name: "planned, Avoid", node: withConditions(testNode("", ""), "MaintenancePlanned"), planned: config.PlannedAvoid,
			want: "node has condition MaintenancePlanned=True", unbounded: true},
		{name: "planned, Score: not filtered", node: withConditions(testNode("", ""), "MaintenancePlanned"), planned: config.PlannedScore},
		{name: "planned False", node: withConditions(testNode("", ""), "MaintenancePlanned=False"), planned: config.PlannedAvoid},
		// MaintenancePlanned with a time: the time alone counts.
		{name: "planned with a window later than avoidWithin", node: withConditions(testNode(interval(5, 6), ""), "MaintenancePlanned"),
			planned: config.PlannedAvoid},
		{name: "planned with GKE's label later than avoidWithin", node: withConditions(testNode("", gkeAt(5)), "MaintenancePlanned"),
			planned: config.PlannedAvoid},
		{name: "planned with an open window", node: withConditions(testNode(interval(-1, 1), ""), "MaintenancePlanned"),
			planned: config.PlannedAvoid, want: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "planned with a past window only", node: withConditions(testNode(interval(-3, -1), ""), "MaintenancePlanned"),
			planned: config.PlannedAvoid, want: "node has condition MaintenancePlanned=True", unbounded: true},
		// Karpenter.
		{name: "no NodeClaim", node: karpenterNode(""), claims: fakeClaims{"other": {Drifted: true}}},
		{name: "a NodeClaim that plans nothing", node: karpenterNode(""), claims: fakeClaims{"n": {Name: "nc"}}},
		{name: "drifted", node: karpenterNode(""), claims: fakeClaims{"n": {Name: "nc", Drifted: true}},
			want: "Karpenter marked the node Drifted", unbounded: true},
		{name: "disrupting", node: karpenterNode(""), claims: fakeClaims{"n": {Name: "nc", Disrupting: true}},
			want: "Karpenter is disrupting the node", unbounded: true},
		// Before Karpenter records the node's name, only its providerID
		// finds the NodeClaim: the whole node must reach ForNode.
		{name: "found by providerID", node: withProviderID(karpenterNode(""), "kwok://n"), claims: fakeClaims{"kwok://n": {Name: "nc", Drifted: true}},
			want: "Karpenter marked the node Drifted", unbounded: true},
		{name: "expiry past avoidWithin", node: karpenterNode(""), claims: expiresIn(3)},
		{name: "expiry within avoidWithin", node: karpenterNode(""), claims: expiresIn(1),
			want: "Karpenter expires the node at 2026-12-01T01:00:00Z", unbounded: true},
		{name: "expiry within avoidWithin, a short pod", node: karpenterNode(""), claims: expiresIn(1), runtime: short},
		{name: "expiry past avoidWithin, a long pod may start", node: karpenterNode(""), claims: expiresIn(3), runtime: long},
		{name: "expiry within avoidWithin, a long pod", node: karpenterNode(""), claims: expiresIn(1), runtime: long,
			want: "Karpenter expires the node at 2026-12-01T01:00:00Z", unbounded: true},
		{name: "expired", node: karpenterNode(""), claims: expiresIn(-1), runtime: short,
			want: "Karpenter expires the node at 2026-11-30T23:00:00Z", unbounded: true},
		{name: "expiry inside a timed window names Karpenter", node: karpenterNode(interval(-1, 1)), claims: expiresIn(0.5),
			want: "Karpenter expires the node at 2026-12-01T00:30:00Z", unbounded: true},
		{name: "expiry after a timed window", node: karpenterNode(interval(-1, 1)), claims: expiresIn(1.5),
			want: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "karpenter off", node: karpenterNode(""), claims: fakeClaims{"n": {Drifted: true}},
			edit: func(a *config.MaintenanceWindowArgs) { a.Karpenter = false }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			args := signalArgs(tc.planned)
			if tc.edit != nil {
				tc.edit(args)
			}
			c, err := New(args)
			if err != nil {
				t.Fatal(err)
			}
			if tc.claims != nil {
				c.SetNodeClaims(tc.claims)
			}
			blocked, until, reason := c.Blocks(logger, plain, tc.node, now, tc.runtime)
			if reason != tc.want || blocked != (tc.want != "") {
				t.Errorf("Blocks = %v, %q; want %q", blocked, reason, tc.want)
			}
			if blocked && IsUnbounded(until) != tc.unbounded {
				t.Errorf("Blocks until %v: unbounded %v, want %v", until, IsUnbounded(until), tc.unbounded)
			}
		})
	}
}

// TestSignalNextStart: Score's view. MaintenancePlanned without a time
// ranks the node as open whatever plannedWithoutTime says, yields to a
// window of known times, and the expiry ranks by its start.
func TestSignalNextStart(t *testing.T) {
	tests := []struct {
		name    string
		node    *v1.Node
		claims  fakeClaims
		planned config.PlannedWithoutTime
		want    time.Duration
		wantOK  bool
	}{
		{name: "nothing", node: withConditions(testNode("", ""))},
		{name: "planned, Score", node: withConditions(testNode("", ""), "MaintenancePlanned"), planned: config.PlannedScore, wantOK: true},
		{name: "planned, Avoid", node: withConditions(testNode("", ""), "MaintenancePlanned"), planned: config.PlannedAvoid, wantOK: true},
		{name: "planned, Score, with a window", node: withConditions(testNode(interval(5, 6), ""), "MaintenancePlanned"),
			planned: config.PlannedScore, want: 5 * time.Hour, wantOK: true},
		{name: "planned, Score, with a past window", node: withConditions(testNode(interval(-5, -4), ""), "MaintenancePlanned"),
			planned: config.PlannedScore, wantOK: true},
		{name: "Drained", node: withConditions(testNode(interval(5, 6), ""), "Drained"), wantOK: true},
		{name: "expiry", node: karpenterNode(""), claims: fakeClaims{"n": {ExpiresAt: hoursFromNow(7)}}, want: 7 * time.Hour, wantOK: true},
		{name: "expiry after a window", node: karpenterNode(interval(5, 6)), claims: fakeClaims{"n": {ExpiresAt: hoursFromNow(7)}},
			want: 5 * time.Hour, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			s := NewSources(signalArgs(tc.planned))
			s.SetNodeClaims(tc.claims)
			got, ok := NextStart(s.Windows(logger, tc.node), now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("NextStart = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestSignalSources: Carries (the plugin's skip), Announcing (metrics) and
// Parse (metrics) see each source, and only while its arg is on.
func TestSignalSources(t *testing.T) {
	claims := fakeClaims{"n": {ExpiresAt: hoursFromNow(7)}}
	tests := []struct {
		name      string
		node      *v1.Node
		edit      func(*config.MaintenanceWindowArgs)
		claims    NodeClaims
		carries   bool
		announces []string
	}{
		{name: "nothing", node: withConditions(testNode("", ""), "Drained=False")},
		{name: "annotation and GKE", node: testNode(interval(1, 2), gkeAt(3)), carries: true,
			announces: []string{SourceAnnotation, SourceGKELabel}},
		{name: "each condition", node: withConditions(testNode("", ""), "DrainInProgress"), carries: true, announces: []string{SourceNodeCondition}},
		{name: "Drained", node: withConditions(testNode("", ""), "Drained"), carries: true, announces: []string{SourceNodeCondition}},
		{name: "MaintenanceInProgress", node: withConditions(testNode("", ""), "MaintenanceInProgress"), carries: true,
			announces: []string{SourceNodeCondition}},
		{name: "MaintenancePlanned", node: withConditions(testNode("", ""), "MaintenancePlanned"), carries: true,
			announces: []string{SourceNodeCondition}},
		{name: "conditions off", node: withConditions(testNode("", ""), "Drained"), edit: func(a *config.MaintenanceWindowArgs) { a.NodeConditions = false }},
		{name: "Karpenter", node: karpenterNode(""), claims: claims, carries: true, announces: []string{SourceKarpenter}},
		{name: "Karpenter node, no NodeClaims given", node: karpenterNode("")},
		{name: "Karpenter off", node: karpenterNode(""), claims: claims, edit: func(a *config.MaintenanceWindowArgs) { a.Karpenter = false }},
		{name: "all", node: withConditions(karpenterNode(interval(1, 2)), "Drained"), claims: claims, carries: true,
			announces: []string{SourceAnnotation, SourceNodeCondition, SourceKarpenter}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := signalArgs(config.PlannedAvoid)
			if tc.edit != nil {
				tc.edit(args)
			}
			s := NewSources(args)
			s.SetNodeClaims(tc.claims)
			if got := s.Carries(tc.node); got != tc.carries {
				t.Errorf("Carries = %v, want %v", got, tc.carries)
			}
			if got := s.Announcing(tc.node); !slices.Equal(got, tc.announces) {
				t.Errorf("Announcing = %q, want %q", got, tc.announces)
			}
			ws, found, err := s.Parse(tc.node)
			if err != nil || found != (len(tc.announces) > 0) || found != (len(ws) > 0) {
				t.Errorf("Parse = %v, %v, %v; want windows found: %v", ws, found, err, len(tc.announces) > 0)
			}
		})
	}
}

// TestSignalsKeepCache: merging a condition's or a NodeClaim's windows
// changes neither the shared condition windows nor the cached annotation's.
func TestSignalsKeepCache(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	s := NewSources(signalArgs(config.PlannedAvoid))
	s.SetNodeClaims(fakeClaims{"n": {ExpiresAt: hoursFromNow(7), Drifted: true}})
	shared := interval(5, 6) + "," + interval(8, 9) + "," + interval(10, 11)
	if got := len(s.Windows(logger, withConditions(karpenterNode(shared), "Drained", "DrainInProgress"))); got != 7 {
		t.Fatalf("merged %d windows, want 7", got)
	}
	other := testNode(shared, "")
	other.Name = "other" // no NodeClaim
	if got := s.Windows(logger, other); len(got) != 3 || got[0].Signal != SignalTimed {
		t.Errorf("the annotation's windows after a merge: %v", got)
	}
	if len(drainedWindows) != 1 || drainedWindows[0].Signal != SignalDrained || len(drainInProgressWindows) != 1 {
		t.Errorf("shared condition windows changed: %v, %v", drainedWindows, drainInProgressWindows)
	}
}

// TestNoSignalAllocatesNothing: a node without a window, with the usual
// conditions, costs no allocation with every source on.
func TestNoSignalAllocatesNothing(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	c, err := New(signalArgs(config.PlannedAvoid))
	if err != nil {
		t.Fatal(err)
	}
	c.SetNodeClaims(fakeClaims{})
	node := withConditions(testNode("", ""), "MemoryPressure=False", "Drained=False")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if n := testing.AllocsPerRun(100, func() { c.Blocks(logger, pod, node, now, nil) }); n != 0 {
		t.Errorf("Blocks allocates %v times", n)
	}
	drained := withConditions(testNode("", ""), "Drained")
	// The rejection's message is formatted with fmt, whose sync.Pool the
	// race detector empties at random: one more allocation is noise there.
	limit := 2.0
	if raceEnabled {
		limit++
	}
	if n := testing.AllocsPerRun(100, func() { c.Blocks(logger, pod, drained, now, nil) }); n > limit {
		t.Errorf("Blocks of a drained node allocates %v times, want at most %v", n, limit)
	}
}
