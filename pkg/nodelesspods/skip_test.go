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

package nodelesspods_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/internal/metricstest"
)

// singleNodeRuns numbers the profiles of TestSingleFeasibleNodeIsNotScored:
// the lookup counters live as long as the process, and -count=N runs the
// test N times in it.
var singleNodeRuns atomic.Int64

// TestSingleFeasibleNodeIsNotScored pins why NodeLessPods never returns
// Skip: the one case it could tell cheaply, a single candidate, never
// reaches it, because the scheduler binds the only feasible node without
// running Score or NormalizeScore. The plugin's lookup counters (Score
// looks counts up, NormalizeScore adds them up) stay 0
// while one node exists, and move as soon as a second one does.
func TestSingleFeasibleNodeIsNotScored(t *testing.T) {
	profileName := fmt.Sprintf("single-node-%d", singleNodeRuns.Add(1))
	nodes := makeNodes(2)
	s := startScheduler(t, nodes[:1], boundPods(nodes[:1], 3),
		internalProfiles(t, leastPodsProfile(profileName, multiPoint))...)
	lookups := func() map[string]float64 {
		return metricstest.Samples(t, "nodelesspods_count_lookups_total", profileName, "result")
	}

	pods := pendingPods("alone", 5, profileName)
	s.createPods(t, pods)
	s.waitBound(t, pods)
	if diff := cmp.Diff(map[string]float64{"hit": 0, "tail": 0, "scan": 0}, lookups()); diff != "" {
		t.Errorf("one node: the scheduler ran the plugin's scoring; count_lookups_total (-want +got):\n%s", diff)
	}

	// The control: with two feasible nodes the same pods are scored.
	if _, err := s.cs.CoreV1().Nodes().Create(s.ctx, nodes[1], metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", nodes[1].Name, err)
	}
	s.waitCachedNode(t, nodes[1].Name, 0, func(n *v1.Node) bool { return n != nil })
	pods = pendingPods("pair", 1, profileName)
	s.createPods(t, pods)
	s.waitBound(t, pods)
	got := lookups()
	if n := got["hit"] + got["tail"] + got["scan"]; n < 2 {
		t.Errorf("two nodes: %v count lookups (%v), want at least one per node", n, got)
	}
}
