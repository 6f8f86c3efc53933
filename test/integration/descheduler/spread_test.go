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
	"slices"
	"testing"

	"k8s.io/utils/ptr"
)

const (
	// spreadReplicas pods fill 3 nodes of spreadCapacity pods to 8 each
	// (LeastPods) or 10, 10 and 4 (MostPods); over 6 nodes they are 4 each.
	spreadReplicas = 24
	spreadCapacity = 10
	// spreadCycles bounds the cycles LeastPods may take to spread; the
	// descheduler then runs stableCycles more, which must evict nothing.
	spreadCycles = 4
	stableCycles = 2
	// fewestMoves is how many pods must move at least: 4 from each full
	// node.
	fewestMoves = 12
)

// rebalance is what one run of the descheduler did.
type rebalance struct {
	// perCycle is the pods each cycle evicted.
	perCycle []int
	// converged is the number of cycles until the pods were where the
	// test wanted them; 0 if they never were.
	converged int
	// counts is the pods per node at the end.
	counts map[string]int
}

// runCycles runs d for cycles cycles, checking after each whether the
// namespace's pods per node, and how many are bound, are done.
func (tc *testContext) runCycles(d *descheduler, cycles int, done func(counts map[string]int, bound int) bool) rebalance {
	tc.t.Helper()
	var r rebalance
	for i := 1; i <= cycles; i++ {
		r.perCycle = append(r.perCycle, d.observe(1)...)
		counts, bound, err := tc.podsPerNode(tc.ctx)
		if err != nil {
			tc.t.Fatal(err)
		}
		r.counts = counts
		if r.converged == 0 && done(counts, bound) {
			r.converged = i
		}
	}
	return r
}

// spread is done when all replicas are bound at most one apart over nodes.
func spread(replicas int, nodes []string) func(map[string]int, int) bool {
	return func(counts map[string]int, bound int) bool {
		return bound == replicas && spreadOf(counts, nodes) <= 1
	}
}

// TestSpread checks that LowNodeUtilization on pod counts and our
// LeastPods profile agree: 3 full nodes spread over 3 that join. The
// crossed pairing, MostPods, is the negative control.
func TestSpread(t *testing.T) {
	lowNodes := lowNodeUtilization(5)
	t.Run("LeastPods", func(t *testing.T) {
		tc := newTestContext(t)
		cfg := shippedConfig(t, "nodelesspods/scheduler-config.yaml")
		tc.startScheduler(cfg)
		full := tc.createNodes("spread-full", 3, spreadCapacity, nil)
		tc.createDeployment("web", spreadReplicas)
		joined := tc.createNodes("spread-new", 3, spreadCapacity, nil)
		watch := tc.watchEvictions()
		d := tc.startDescheduler(policy(lowNodes, map[string]any{"nodeFit": true}, nil))
		r := tc.runCycles(d, spreadCycles+stableCycles, spread(spreadReplicas, append(full, joined...)))
		evicted := watch.pods()
		t.Logf("LeastPods + LowNodeUtilization: %d evictions (%d distinct pods), per cycle %v, spread <= 1 after %d cycles, pods per node %v",
			total(r.perCycle), len(evicted), r.perCycle, r.converged, r.counts)
		if r.converged == 0 || r.converged > spreadCycles {
			t.Errorf("the pods were not spread to at most 1 apart within %d cycles (after %d: %v)", spreadCycles, len(r.perCycle), r.counts)
		}
		if got := total(r.perCycle); got != len(evicted) {
			t.Errorf("the descheduler counted %d evictions of %d distinct pods: a pod was evicted twice", got, len(evicted))
		}
		if len(evicted) > fewestMoves {
			t.Errorf("%d pods evicted, %d needed: a replacement was moved again", len(evicted), fewestMoves)
		}
		for uid, e := range evicted {
			if !slices.Contains(full, e.node) {
				t.Errorf("pod %s (%s) was evicted from %s, a node that joined empty", e.name, uid, e.node)
			}
		}
		if tail := r.perCycle[len(r.perCycle)-stableCycles:]; slices.Max(tail) > 0 {
			t.Errorf("the descheduler kept evicting once the pods were spread: per cycle %v", r.perCycle)
		}
	})
	t.Run("MostPodsCrossed", func(t *testing.T) {
		tc := newTestContext(t)
		cfg := shippedConfig(t, "nodelesspods/consolidation-config.yaml")
		cfg.Profiles[0].SchedulerName = ptr.To(schedulerName)
		tc.startScheduler(cfg)
		full := tc.createNodes("cross-full", 3, spreadCapacity, nil)
		tc.createDeployment("web", spreadReplicas)
		joined := tc.createNodes("cross-new", 3, spreadCapacity, nil)
		watch := tc.watchEvictions()
		d := tc.startDescheduler(policy(lowNodes, map[string]any{"nodeFit": true}, nil))
		r := tc.runCycles(d, spreadCycles+stableCycles, spread(spreadReplicas, append(full, joined...)))
		evicted := watch.pods()
		evicting := evictingCycles(r.perCycle)
		t.Logf("MostPods + LowNodeUtilization (crossed): %d evictions (%d distinct pods) in %d of %d cycles, per cycle %v, pods per node %v",
			total(r.perCycle), len(evicted), evicting, len(r.perCycle), r.perCycle, r.counts)
		if r.converged != 0 {
			t.Errorf("the crossed pairing spread the pods after %d cycles (%v): the negative control no longer shows the fight", r.converged, r.counts)
		}
		if evicting < 2 || len(evicted) <= fewestMoves {
			t.Errorf("the crossed pairing evicted %d pods in %d cycles: want the workload evicted again, in 2 cycles or more, more than the %d pods a single rebalancing moves",
				len(evicted), evicting, fewestMoves)
		}
	})
}

// total adds the per-cycle evictions.
func total(perCycle []int) int {
	n := 0
	for _, c := range perCycle {
		n += c
	}
	return n
}

// evictingCycles counts the cycles that evicted pods.
func evictingCycles(perCycle []int) int {
	n := 0
	for _, c := range perCycle {
		if c > 0 {
			n++
		}
	}
	return n
}
