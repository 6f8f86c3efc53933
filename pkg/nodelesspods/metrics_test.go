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

package nodelesspods

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/internal/metricstest"
)

// newProfilePlugin builds the plugin of profile on snapshot, running until
// ctx is done.
func newProfilePlugin(ctx context.Context, t *testing.T, profile string, snapshot *cache.Snapshot) *NodeLessPods {
	t.Helper()
	fh, err := frameworkruntime.NewFramework(ctx, nil, &schedconfig.KubeSchedulerProfile{SchedulerName: profile},
		frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		t.Fatalf("NewFramework: %v", err)
	}
	p, err := New(ctx, defaultArgs(), fh)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodeLessPods)
}

// scoreNodes runs Score on every node of the snapshot in a regular cycle,
// then NormalizeScore, as the framework does.
func scoreNodes(ctx context.Context, t *testing.T, pl *NodeLessPods, snapshot *cache.Snapshot) {
	t.Helper()
	normalizeScores(ctx, t, pl, scoreOnly(ctx, t, pl, snapshot))
}

// scoreOnly is the first half of a cycle: Score on every node.
func scoreOnly(ctx context.Context, t *testing.T, pl *NodeLessPods, snapshot *cache.Snapshot) fwk.NodeScoreList {
	t.Helper()
	nodeInfos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState()
	var scores fwk.NodeScoreList
	for _, ni := range nodeInfos {
		s, status := pl.Score(ctx, state, &v1.Pod{}, ni)
		if !status.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, status)
		}
		scores = append(scores, fwk.NodeScore{Name: ni.Node().Name, Score: s})
	}
	return scores
}

func normalizeScores(ctx context.Context, t *testing.T, pl *NodeLessPods, scores fwk.NodeScoreList) {
	t.Helper()
	if status := pl.NormalizeScore(ctx, framework.NewCycleState(), &v1.Pod{}, scores); !status.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", status)
	}
}

// TestLookupMetrics scores with two instances of one profile, then stops
// them one by one: the lookups are summed over the instances and kept when
// an instance stops (a counter does not go down); memo_nodes is the live
// instances' memos, with no sample once none runs.
func TestLookupMetrics(t *testing.T) {
	_, base := ktesting.NewTestContext(t)
	profile := uniqueProfile(t)
	nodes := []*v1.Node{node("a", 10), node("b", 10), node("c", 10)}
	pods := []*v1.Pod{boundPod("p1", "default", "a").Obj(), boundPod("p2", "default", "b").Obj()}
	snapshot := cache.NewSnapshot(pods, nodes)
	ctxA, cancelA := context.WithCancel(base)
	ctxB, cancelB := context.WithCancel(base)
	defer cancelA()
	defer cancelB()
	a := newProfilePlugin(ctxA, t, profile, snapshot)
	b := newProfilePlugin(ctxB, t, profile, snapshot)

	lookups := func() map[string]float64 {
		return metricstest.Samples(t, "nodelesspods_count_lookups_total", profile, "result")
	}
	memoNodes := func() map[string]float64 { return metricstest.Samples(t, "nodelesspods_memo_nodes", profile, "") }
	check := func(step string, wantLookups, wantMemo map[string]float64) {
		t.Helper()
		if diff := cmp.Diff(wantLookups, lookups()); diff != "" {
			t.Errorf("%s: count_lookups_total (-want +got):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantMemo, memoNodes()); diff != "" {
			t.Errorf("%s: memo_nodes (-want +got):\n%s", step, diff)
		}
	}
	check("before any cycle", map[string]float64{"hit": 0, "tail": 0, "scan": 0}, map[string]float64{"": 0})

	scoreNodes(base, t, a, snapshot) // 3 scans
	scoreNodes(base, t, a, snapshot) // 3 hits
	scoreNodes(base, t, b, snapshot) // 3 scans of b's own memo
	check("two instances", map[string]float64{"hit": 3, "tail": 0, "scan": 6}, map[string]float64{"": 6})

	cancelA()
	waitFor(t, func() bool { return memoNodes()[""] == 3 })
	check("a stopped", map[string]float64{"hit": 3, "tail": 0, "scan": 6}, map[string]float64{"": 3})

	// A scrape between a cycle's Score calls and its NormalizeScore sees
	// the cycle's scans before its lookups: hit must not go down.
	for _, n := range []string{"a", "b", "c"} {
		ni, err := snapshot.NodeInfos().Get(n)
		if err != nil {
			t.Fatal(err)
		}
		ni.(*framework.NodeInfo).Generation++
	}
	scores := scoreOnly(base, t, b, snapshot) // 3 scans
	check("mid-cycle", map[string]float64{"hit": 3, "tail": 0, "scan": 9}, map[string]float64{"": 3})
	normalizeScores(base, t, b, scores)
	check("cycle done", map[string]float64{"hit": 3, "tail": 0, "scan": 9}, map[string]float64{"": 3})

	scoreNodes(base, t, b, snapshot) // 3 hits
	cancelB()
	waitFor(t, func() bool { return len(memoNodes()) == 0 })
	check("both stopped", map[string]float64{"hit": 6, "tail": 0, "scan": 9}, map[string]float64{})
}

// profiles numbers the tests' profiles: counters live as long as the
// process, and go test -count=N runs a test N times in one process.
var profiles atomic.Int64

// uniqueProfile returns a profile name no other test run has used.
func uniqueProfile(t *testing.T) string {
	return fmt.Sprintf("%s#%d", t.Name(), profiles.Add(1))
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 5000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never met")
}
