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
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// claimsByNode is a map-backed window.NodeClaims.
type claimsByNode map[string]window.NodeClaim

func (c claimsByNode) ForNode(n *v1.Node) (window.NodeClaim, bool) {
	nc, ok := c[n.Name]
	return nc, ok
}

// conditionNode is node(name, annotation) with condition t True, unless t
// is empty.
func conditionNode(name, annotation string, t v1.NodeConditionType) *v1.Node {
	n := node(name, annotation)
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	if t != "" {
		n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: t, Status: v1.ConditionTrue})
	}
	return n
}

// TestLifecycleSignalsFilterAndScore: the plugin's Filter, Score and nodes
// metric over the conditions and a NodeClaim, for each plannedWithoutTime.
func TestLifecycleSignalsFilterAndScore(t *testing.T) {
	horizon := int64((24 * time.Hour).Seconds())
	claims := claimsByNode{
		"expiring": {Name: "nc-1", ExpiresAt: now.Add(30 * time.Minute)},
		"later":    {Name: "nc-2", ExpiresAt: now.Add(7 * time.Hour)},
		"drifted":  {Name: "nc-3", Drifted: true},
	}
	tests := []struct {
		name      string
		node      *v1.Node
		planned   config.PlannedWithoutTime
		want      string // Filter's message; "" passes
		score     int64
		state     string
		wantState bool
	}{
		{name: "no signal", node: conditionNode("n", "", ""), score: horizon},
		{name: "DrainInProgress", node: conditionNode("n", "", window.ConditionDrainInProgress),
			want: "node has condition DrainInProgress=True", state: stateOpen, wantState: true},
		{name: "planned, Avoid", node: conditionNode("n", "", window.ConditionMaintenancePlanned), planned: config.PlannedAvoid,
			want: "node has condition MaintenancePlanned=True", state: stateOpen, wantState: true},
		{name: "planned, Score", node: conditionNode("n", "", window.ConditionMaintenancePlanned), planned: config.PlannedScore,
			state: stateUpcoming, wantState: true},
		{name: "planned with a window in 5h", node: conditionNode("n", interval(5, 6), window.ConditionMaintenancePlanned),
			planned: config.PlannedAvoid, score: 5 * 3600, state: stateUpcoming, wantState: true},
		{name: "Karpenter expiry within avoidWithin", node: node("expiring", ""),
			want: "Karpenter expires the node at 2026-12-01T00:30:00Z", state: stateAvoided, wantState: true},
		{name: "Karpenter expiry in 7h", node: node("later", ""), score: 7 * 3600, state: stateUpcoming, wantState: true},
		{name: "Karpenter drift", node: node("drifted", ""), want: "Karpenter marked the node Drifted", state: stateOpen, wantState: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) {
				a.AvoidWithin.Duration = time.Hour
				if tc.planned != "" {
					a.PlannedWithoutTime = tc.planned
				}
			}))
			pl.check.SetNodeClaims(claims)
			pod := jobPod("deploy", 0, "")
			checkFilter(ctx, t, pl, nil, pod, tc.node, tc.want)
			if tc.want == "" {
				score, status := pl.Score(ctx, nil, pod, nodeInfo(tc.node))
				if !status.IsSuccess() || score != tc.score {
					t.Errorf("Score = %d, %v; want %d", score, status, tc.score)
				}
			}
			if state, ok := pl.nodeState(tc.node, now); state != tc.state || ok != tc.wantState {
				t.Errorf("nodeState = %q, %v; want %q, %v", state, ok, tc.state, tc.wantState)
			}
		})
	}
}

// TestUnboundedPlansNoRetry: a node kept off by a condition has no end to
// retry at; a timed window next to it still plans its retry.
func TestUnboundedPlansNoRetry(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	drained := conditionNode("drained", "", window.ConditionDrained)
	pl, _, h := newPlugin(t, defaultArgs(nil), drained)
	pod := pendingPod("p")
	h.addPod(t, pod)
	if s := pl.Filter(ctx, nil, pod, nodeInfo(drained)); s.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("Filter: %v", s)
	}
	if n := pl.pendingRetries(); n != 0 {
		t.Errorf("%d retries planned at an unknown end, want 0", n)
	}
	if s := pl.Filter(ctx, nil, pod, nodeInfo(node("w", interval(-1, 1)))); s.IsSuccess() {
		t.Fatal("Filter passed a node in its window")
	}
	if n := pl.pendingRetries(); n != 1 {
		t.Errorf("%d retries planned for a timed window, want 1", n)
	}
}

// TestSkipCountsConditions: a node with a lifecycle condition True is a
// signal for PreFilter's skip, one with it False is not.
func TestSkipCountsConditions(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	falseOnly := conditionNode("n", "", "")
	falseOnly.Status.Conditions = append(falseOnly.Status.Conditions,
		v1.NodeCondition{Type: window.ConditionDrainInProgress, Status: v1.ConditionFalse})
	pl, _, h := newPlugin(t, defaultArgs(nil), falseOnly)
	if !skips(t, ctx, pl, pod) {
		t.Fatal("DrainInProgress=False: no skip")
	}
	updateNode(t, h.client, conditionNode("n", "", window.ConditionDrainInProgress))
	waitSkips(t, ctx, pl, pod, false, "DrainInProgress=True")
	off, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.NodeConditions = false }),
		conditionNode("n", "", window.ConditionDrainInProgress))
	if !skips(t, ctx, off, pod) {
		t.Error("nodeConditions off, DrainInProgress=True: no skip")
	}
}
