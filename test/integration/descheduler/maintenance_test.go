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

package descheduler

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// windowKey is MaintenanceWindow's annotation in the shipped profile and
// the taint pkg/maintenancewindow/README.md tells to set when a window
// opens.
const windowKey = "scheduling.adminsched.io/maintenance-window"

// drainCycles bounds the cycles the drain may take.
const drainCycles = 4

// TestMaintenanceDrain checks that RemovePodsViolatingNodeTaints drains a
// node tainted for its open window and that our MaintenanceWindow profile
// (manifests/maintenancewindow/scheduler-config.yaml) places the
// replacements on the node outside any window, not on the one whose window
// opens within avoidWithin (30m).
func TestMaintenanceDrain(t *testing.T) {
	tc := newTestContext(t)
	tc.startScheduler(shippedConfig(t, "maintenancewindow/scheduler-config.yaml"))
	nodes := tc.createNodes("mw", 3, spreadCapacity, nil)
	open, soon, free := nodes[0], nodes[1], nodes[2]
	const replicas = 6
	tc.createDeployment("web", replicas)
	before, _, err := tc.podsPerNode(tc.ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	tc.annotateWindow(open, now.Add(-time.Minute), now.Add(2*time.Hour))
	tc.annotateWindow(soon, now.Add(10*time.Minute), now.Add(2*time.Hour))
	tc.taint(open)
	watch := tc.watchEvictions()
	d := tc.startDescheduler(policy(plugin{point: "deschedule", name: "RemovePodsViolatingNodeTaints", args: map[string]any{
		"includedTaints": []string{windowKey},
	}}, map[string]any{}, nil))
	// One more cycle than the drain may take, to see it evict nothing more.
	r := tc.runCycles(d, drainCycles+1, func(counts map[string]int, bound int) bool {
		return bound == replicas && counts[open] == 0
	})
	evicted := watch.pods()
	t.Logf("drain: pods per node %v before, %v after; %d evictions, per cycle %v, node %s empty after %d cycles",
		before, r.counts, len(evicted), r.perCycle, open, r.converged)
	if r.converged == 0 || r.converged > drainCycles {
		t.Fatalf("%s in its window was not drained within %d cycles: %v", open, drainCycles, r.counts)
	}
	if len(evicted) != before[open] {
		t.Errorf("%d pods evicted, want the %d on %s", len(evicted), before[open], open)
	}
	for uid, e := range evicted {
		if e.node != open {
			t.Errorf("pod %s (%s) was evicted from %s, not from the tainted %s", e.name, uid, e.node, open)
		}
	}
	if r.counts[soon] != before[soon] || r.counts[free] != before[free]+before[open] {
		t.Errorf("pods per node %v, want the %d pods of %s on %s (outside any window), none on %s (window in 10m)",
			r.counts, before[open], open, free, soon)
	}
	if last := r.perCycle[len(r.perCycle)-1]; last != 0 {
		t.Errorf("the descheduler evicted %d pods in the cycle after the drain", last)
	}
}

// annotateWindow sets node's window annotation to start/end.
func (tc *testContext) annotateWindow(node string, start, end time.Time) {
	window := start.Format(time.RFC3339) + "/" + end.Format(time.RFC3339)
	tc.patchNode(node, map[string]any{"metadata": map[string]any{"annotations": map[string]string{windowKey: window}}})
}

// taint sets the maintenance-window NoSchedule taint on node (it has no
// other), as the tool that runs the maintenance does when the window
// opens.
func (tc *testContext) taint(node string) {
	tc.patchNode(node, map[string]any{"spec": map[string]any{"taints": []v1.Taint{{Key: windowKey, Effect: v1.TaintEffectNoSchedule}}}})
}

// patchNode merge-patches node: no conflict with KWOK's status updates.
func (tc *testContext) patchNode(node string, patch map[string]any) {
	tc.t.Helper()
	data, err := json.Marshal(patch)
	if err != nil {
		tc.t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Patch(tc.ctx, node, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		tc.t.Fatalf("patching node %s with %s: %v", node, data, err)
	}
}
