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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const (
	// The dense nodes hold 3 pods of denseCapacity (37.5%, above the
	// policy's 20% pods threshold): HighNodeUtilization does nothing when
	// every node is under-utilized, so they are its targets. The thin
	// nodes hold 2 of thinCapacity (10%): the sources. Their 8 pods fit in
	// the 10 free slots of the dense nodes.
	denseNodes, densePods, denseCapacity = 2, 3, 8
	thinNodes, thinPods, thinCapacity    = 4, 2, 20
	consolidationReplicas                = denseNodes*densePods + thinNodes*thinPods
	// consolidationCycles bounds the cycles each subtest watches.
	consolidationCycles = 3
)

// TestConsolidation runs the shipped consolidate-policy.yaml
// (HighNodeUtilization with PolicyEvictor) next to NodeLessPods MostPods
// (KEP-47 §5): the pods of the thin nodes are evicted and packed onto the
// dense ones, so fewer nodes hold pods. The negative control runs the same
// policy with LeastPods, which spreads the replacements again.
func TestConsolidation(t *testing.T) {
	t.Run("MostPods", func(t *testing.T) {
		tc := newTestContext(t)
		cfg := shippedConfig(t, "nodelesspods/consolidation-config.yaml")
		cfg.Profiles[0].SchedulerName = ptr.To(schedulerName)
		r, before, evicted := tc.consolidate(tc.startScheduler(cfg))
		after := occupied(r.counts)
		t.Logf("MostPods + HighNodeUtilization: nodes holding pods %d -> %d (after %d cycles), %d evictions (%d distinct pods), per cycle %v, pods per node %v",
			before, after, r.converged, total(r.perCycle), len(evicted), r.perCycle, r.counts)
		if r.converged == 0 {
			t.Errorf("the pods were not packed onto the %d dense nodes within %d cycles: %d nodes hold pods (%v)", denseNodes, consolidationCycles, after, r.counts)
		}
		if got := total(r.perCycle); got != len(evicted) {
			t.Errorf("the descheduler counted %d evictions of %d distinct pods: a pod was evicted twice", got, len(evicted))
		}
		if want := thinNodes * thinPods; len(evicted) != want {
			t.Errorf("%d pods evicted, want the %d of the thin nodes", len(evicted), want)
		}
		for uid, e := range evicted {
			if !slices.Contains(tc.nodes[denseNodes:], e.node) {
				t.Errorf("pod %s (%s) was evicted from %s, not a thin node", e.name, uid, e.node)
			}
		}
	})
	t.Run("LeastPodsControl", func(t *testing.T) {
		tc := newTestContext(t)
		cfg := shippedConfig(t, "nodelesspods/scheduler-config.yaml")
		r, before, evicted := tc.consolidate(tc.startScheduler(cfg))
		after := occupied(r.counts)
		t.Logf("LeastPods + HighNodeUtilization (control): nodes holding pods %d -> %d, %d evictions (%d distinct pods) in %d of %d cycles, per cycle %v, pods per node %v",
			before, after, total(r.perCycle), len(evicted), evictingCycles(r.perCycle), len(r.perCycle), r.perCycle, r.counts)
		if r.converged != 0 || after < before {
			t.Errorf("LeastPods let the policy consolidate: %d nodes hold pods, %d before (%v)", after, before, r.counts)
		}
		if len(evicted) == 0 {
			t.Error("nothing was evicted: the control no longer shows the replacements spread again")
		}
	})
}

// consolidate places the pods (densePods on each dense node, thinPods on
// each thin one), runs the shipped policy with PolicyEvictor reading
// schedulerConfig, and waits until all pods run again. It returns the
// cycles (converged when only the dense nodes hold pods), the nodes that
// held pods before and the evictions.
func (tc *testContext) consolidate(schedulerConfig string) (rebalance, int, map[types.UID]eviction) {
	tc.t.Helper()
	dense := tc.createNodes("dense", denseNodes, denseCapacity, nil)
	thin := tc.createNodes("thin", thinNodes, thinCapacity, nil)
	perNode := append(slices.Repeat([]int{densePods}, denseNodes), slices.Repeat([]int{thinPods}, thinNodes)...)
	tc.placeByCordoning("web", append(dense, thin...), perNode)
	counts, _, err := tc.podsPerNode(tc.ctx)
	if err != nil {
		tc.t.Fatal(err)
	}
	before := occupied(counts)
	watch := tc.watchEvictions()
	d := tc.startDescheduler(consolidatePolicy(tc.t, schedulerConfig))
	r := tc.runCycles(d, consolidationCycles, func(counts map[string]int, bound int) bool {
		return bound == consolidationReplicas && occupied(counts) == denseNodes
	})
	d.stop()
	tc.waitSettled(consolidationReplicas)
	tc.expectRunning()
	return r, before, watch.pods()
}

// placeByCordoning creates Deployment name with perNode[i] pods on
// nodes[i]: only nodes[i] is schedulable while the Deployment scales up
// by perNode[i]. At the end every node is schedulable and untainted.
func (tc *testContext) placeByCordoning(name string, nodes []string, perNode []int) {
	tc.t.Helper()
	for _, n := range nodes {
		tc.cordon(n, true)
	}
	replicas := 0
	for i, n := range nodes {
		tc.cordon(n, false)
		replicas += perNode[i]
		if i == 0 {
			tc.createDeployment(name, replicas)
		} else {
			// A patch: the controller updates the Deployment's status meanwhile.
			body := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
			if _, err := client.AppsV1().Deployments(tc.ns).Patch(tc.ctx, name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
				tc.t.Fatalf("scaling Deployment %s to %d: %v", name, replicas, err)
			}
			tc.waitSettled(replicas)
		}
		tc.cordon(n, true)
	}
	for _, n := range nodes {
		tc.cordon(n, false)
	}
	// The node lifecycle controller removes the unschedulable taint after
	// the uncordon; until then the scheduler would not use the node.
	tc.poll("the nodes to lose the unschedulable taint", func(ctx context.Context) (bool, error) {
		for _, n := range nodes {
			node, err := client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if slices.ContainsFunc(node.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeUnschedulable }) {
				return false, nil
			}
		}
		return true, nil
	})
}

// cordon sets the node's spec.unschedulable.
func (tc *testContext) cordon(node string, unschedulable bool) {
	tc.t.Helper()
	body := []byte(`{"spec":{"unschedulable":false}}`)
	if unschedulable {
		body = []byte(`{"spec":{"unschedulable":true}}`)
	}
	if _, err := client.CoreV1().Nodes().Patch(tc.ctx, node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		tc.t.Fatalf("cordoning node %s (%v): %v", node, unschedulable, err)
	}
}

// expectRunning fails the test unless every pod of the namespace is bound
// and Running.
func (tc *testContext) expectRunning() {
	tc.t.Helper()
	tc.poll("all pods Running", func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.Status.Phase != v1.PodRunning {
				return false, nil
			}
		}
		return len(pods.Items) == consolidationReplicas, nil
	})
}

// occupied counts the nodes holding pods.
func occupied(counts map[string]int) int {
	n := 0
	for node, c := range counts {
		if node != "" && c > 0 {
			n++
		}
	}
	return n
}

// consolidatePolicy reads the shipped consolidate-policy.yaml and points
// PolicyEvictor's schedulerConfig at the test scheduler's config file.
func consolidatePolicy(t *testing.T, schedulerConfig string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../../manifests", "descheduler/consolidate-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	profiles, _ := p["profiles"].([]any)
	for _, prof := range profiles {
		config, _ := prof.(map[string]any)["pluginConfig"].([]any)
		for _, c := range config {
			if c := c.(map[string]any); c["name"] == "PolicyEvictor" {
				c["args"].(map[string]any)["schedulerConfig"] = schedulerConfig
				return p
			}
		}
	}
	t.Fatal("consolidate-policy.yaml has no PolicyEvictor args to point at the test's scheduler config")
	return nil
}
