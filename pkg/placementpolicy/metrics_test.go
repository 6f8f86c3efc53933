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

package placementpolicy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/podgrouptest"
)

// metricRules are two Require rules and a Prefer rule, told apart by pod
// labels.
func metricArgs() *config.PlacementPolicyArgs {
	return testArgs(func(a *config.PlacementPolicyArgs) {
		a.Rules = []config.PlacementRule{
			{Name: "eu", PodSelector: selector("placement", "eu"), NodeSelector: inRegions("eu-west-1"), Action: config.PlacementRequire},
			{Name: "gpu", PodSelector: selector("accelerator", "gpu"), NodeSelector: selector("gpu", "true"), Action: config.PlacementRequire},
			{Name: "spot", PodSelector: selector("workload", "batch"), NodeSelector: selector("capacity", "spot"), Action: config.PlacementPrefer, Weight: 10},
		}
	})
}

// newProfilePlugin builds the plugin on a framework handle of the named
// profile: each test counts under a profile of its own, so that tests that
// share the process-wide registry do not see each other's counts.
func newProfilePlugin(t testing.TB, ctx context.Context, profile string, args runtime.Object) *PlacementPolicy {
	t.Helper()
	fh, err := frameworkruntime.NewFramework(ctx, nil, &schedconfig.KubeSchedulerProfile{SchedulerName: profile})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, args, fh)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*PlacementPolicy)
}

// profiles numbers the tests' profiles: counters live as long as the
// process, and go test -count=N runs a test N times in one process.
var profiles atomic.Int64

// uniqueProfile returns a profile name no other test run has used.
func uniqueProfile(t *testing.T) string {
	return fmt.Sprintf("%s#%d", t.Name(), profiles.Add(1))
}

// ruleCounts reads a counter from the registry /metrics serves: the value of
// each rule's series of the profile.
func ruleCounts(t *testing.T, name, profile string) map[string]float64 {
	t.Helper()
	got, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, name, map[string]string{"profile": profile}, "rule")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return got
}

func nodeInfos(nodes ...*v1.Node) []fwk.NodeInfo {
	var nis []fwk.NodeInfo
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		nis = append(nis, ni)
	}
	return nis
}

var (
	euGPU = node("eu-gpu", regionKey, "eu-west-1", "gpu", "true")
	usGPU = node("us-gpu", regionKey, "us-east-1", "gpu", "true")
	euCPU = node("eu-cpu", regionKey, "eu-west-1")
)

// TestRuleMetrics runs attempts as the framework does (PreFilter, Filter on
// every node, PostFilter when no node is feasible, PreScore otherwise) and
// checks both counters for every rule of the profile.
func TestRuleMetrics(t *testing.T) {
	tests := []struct {
		name   string
		labels []string
		nodes  []*v1.Node
		// noPreFilter runs the attempt of a profile that enables the
		// plugin at score only.
		noPreFilter bool
		// podGroup marks the cycle as a pod-group cycle.
		podGroup          bool
		attempts          int
		wantApplied       map[string]float64
		wantUnschedulable map[string]float64
	}{
		{
			name:              "a pod no rule selects counts nothing",
			labels:            []string{"app", "web"},
			nodes:             []*v1.Node{euGPU, usGPU},
			attempts:          1,
			wantApplied:       map[string]float64{"eu": 0, "gpu": 0, "spot": 0},
			wantUnschedulable: map[string]float64{"eu": 0, "gpu": 0},
		},
		{
			name:              "a feasible attempt counts applied only, once per attempt",
			labels:            []string{"placement", "eu"},
			nodes:             []*v1.Node{euGPU, usGPU, euCPU},
			attempts:          3,
			wantApplied:       map[string]float64{"eu": 3, "gpu": 0, "spot": 0},
			wantUnschedulable: map[string]float64{"eu": 0, "gpu": 0},
		},
		{
			name:              "a Prefer rule is counted once, in PreFilter",
			labels:            []string{"workload", "batch"},
			nodes:             []*v1.Node{euGPU, usGPU},
			attempts:          2,
			wantApplied:       map[string]float64{"eu": 0, "gpu": 0, "spot": 2},
			wantUnschedulable: map[string]float64{"eu": 0, "gpu": 0},
		},
		{
			name:              "no feasible node: each Require rule that rejected a node counts",
			labels:            []string{"placement", "eu", "accelerator", "gpu", "workload", "batch"},
			nodes:             []*v1.Node{usGPU, euCPU},
			attempts:          2,
			wantApplied:       map[string]float64{"eu": 2, "gpu": 2, "spot": 2},
			wantUnschedulable: map[string]float64{"eu": 2, "gpu": 2},
		},
		{
			name:              "no feasible node: a rule that rejected none does not count",
			labels:            []string{"placement", "eu", "accelerator", "gpu"},
			nodes:             []*v1.Node{usGPU},
			attempts:          1,
			wantApplied:       map[string]float64{"eu": 1, "gpu": 1, "spot": 0},
			wantUnschedulable: map[string]float64{"eu": 1, "gpu": 0},
		},
		{
			name:              "without PreFilter, PreScore counts applied",
			labels:            []string{"placement", "eu", "workload", "batch"},
			nodes:             []*v1.Node{euGPU},
			noPreFilter:       true,
			attempts:          2,
			wantApplied:       map[string]float64{"eu": 2, "gpu": 0, "spot": 2},
			wantUnschedulable: map[string]float64{"eu": 0, "gpu": 0},
		},
		{
			name:              "pod-group cycles are not counted",
			labels:            []string{"placement", "eu"},
			nodes:             []*v1.Node{euGPU},
			podGroup:          true,
			attempts:          2,
			wantApplied:       map[string]float64{"eu": 0, "gpu": 0, "spot": 0},
			wantUnschedulable: map[string]float64{"eu": 0, "gpu": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			profile := uniqueProfile(t)
			pl := newProfilePlugin(t, ctx, profile, metricArgs())
			pod := st.MakePod().Name("p").Namespace("default").Labels(selector(tc.labels...).MatchLabels).Obj()
			nodes := nodeInfos(tc.nodes...)
			for range tc.attempts {
				attempt(t, ctx, pl, pod, nodes, !tc.noPreFilter, tc.podGroup)
			}
			if diff := cmp.Diff(tc.wantApplied, ruleCounts(t, "placementpolicy_rule_applied_total", profile)); diff != "" {
				t.Errorf("rule_applied_total (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnschedulable, ruleCounts(t, "placementpolicy_unschedulable_total", profile)); diff != "" {
				t.Errorf("unschedulable_total (-want +got):\n%s", diff)
			}
		})
	}
}

// attempt runs one scheduling attempt of pod over nodes as the framework
// does: Filter on parallel goroutines (as findNodesThatPassFilters does),
// PostFilter when no node passed outside pod-group cycles, PreScore
// otherwise.
func attempt(t *testing.T, ctx context.Context, pl *PlacementPolicy, pod *v1.Pod, nodes []fwk.NodeInfo, preFilter, podGroup bool) {
	t.Helper()
	state := framework.NewCycleState()
	if podGroup {
		podgrouptest.Skip(t)
		podgrouptest.MarkCycle(state)
	}
	filter := true
	if preFilter {
		_, status := pl.PreFilter(ctx, state, pod, nodes)
		if !status.IsSuccess() && !status.IsSkip() {
			t.Fatalf("PreFilter: %v", status)
		}
		filter = !status.IsSkip()
	}
	feasible := len(nodes)
	if filter {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, ni := range nodes {
			wg.Go(func() {
				if status := pl.Filter(ctx, state, pod, ni); !status.IsSuccess() {
					mu.Lock()
					feasible--
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	if feasible == 0 {
		if podGroup {
			return // the framework runs no per-pod PostFilter there
		}
		if _, status := pl.PostFilter(ctx, state, pod, framework.NewDefaultNodeToStatus()); status.Code() != fwk.Unschedulable {
			t.Fatalf("PostFilter: got %v, want Unschedulable", status)
		}
		return
	}
	if status := pl.PreScore(ctx, state, pod, nodes); !status.IsSuccess() && !status.IsSkip() {
		t.Fatalf("PreScore: %v", status)
	}
}

// TestRuleMetricsSumInstances: two instances of one profile (two schedulers
// in one process, or a restart of the framework) add to the same series.
func TestRuleMetricsSumInstances(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	profile := uniqueProfile(t)
	a := newProfilePlugin(t, ctx, profile, metricArgs())
	b := newProfilePlugin(t, ctx, profile, metricArgs())
	pod := st.MakePod().Name("p").Namespace("default").Label("placement", "eu").Obj()
	nodes := nodeInfos(usGPU)
	attempt(t, ctx, a, pod, nodes, true, false)
	attempt(t, ctx, b, pod, nodes, true, false)
	attempt(t, ctx, b, pod, nodes, true, false)
	if diff := cmp.Diff(map[string]float64{"eu": 3, "gpu": 0, "spot": 0}, ruleCounts(t, "placementpolicy_rule_applied_total", profile)); diff != "" {
		t.Errorf("rule_applied_total (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"eu": 3, "gpu": 0}, ruleCounts(t, "placementpolicy_unschedulable_total", profile)); diff != "" {
		t.Errorf("unschedulable_total (-want +got):\n%s", diff)
	}
}

// TestManyRequireRules: rejections by rules past the 64th, which do not fit
// the bit mask, are recorded too.
func TestManyRequireRules(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	profile := uniqueProfile(t)
	const n, last = 70, 66
	ruleName := func(i int) string { return fmt.Sprintf("r%02d", i) }
	args := testArgs(func(a *config.PlacementPolicyArgs) {
		a.Rules = nil
		for i := range n {
			a.Rules = append(a.Rules, config.PlacementRule{Name: ruleName(i), PodSelector: selector("placement", "eu"),
				NodeSelector: selector(ruleName(i), "yes"), Action: config.PlacementRequire})
		}
	})
	pl := newProfilePlugin(t, ctx, profile, args)
	pod := st.MakePod().Name("p").Namespace("default").Label("placement", "eu").Obj()
	// One node matches the rules before the 67th, which rejects it; the
	// other matches none, so the first rejects it.
	var kv []string
	for i := range last {
		kv = append(kv, ruleName(i), "yes")
	}
	attempt(t, ctx, pl, pod, nodeInfos(node("most", kv...), node("none")), true, false)
	want := map[string]float64{}
	for i := range n {
		want[ruleName(i)] = 0
	}
	want[ruleName(0)], want[ruleName(last)] = 1, 1
	if diff := cmp.Diff(want, ruleCounts(t, "placementpolicy_unschedulable_total", profile)); diff != "" {
		t.Errorf("unschedulable_total (-want +got):\n%s", diff)
	}
}

// afterPostFilter is a PostFilter plugin that records being called, in place
// of DefaultPreemption after PlacementPolicy.
type afterPostFilter struct{ called int }

func (p *afterPostFilter) Name() string { return "AfterPostFilter" }

func (p *afterPostFilter) PostFilter(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	p.called++
	return nil, fwk.NewStatus(fwk.Unschedulable, "after")
}

// TestInFramework runs the plugin in the in-tree framework: with PostFilter
// enabled ahead of another PostFilter plugin, PlacementPolicy's Unschedulable
// must not stop the next one (preemption) from running; with the plugin
// enabled at filter only, Filter still rejects and nothing is counted.
func TestInFramework(t *testing.T) {
	schedmetrics.Register() // the framework reports to the scheduler's metrics
	tests := []struct {
		name              string
		plugins           schedconfig.Plugins
		wantAfter         int
		wantCode          fwk.Code
		wantUnschedulable map[string]float64
	}{
		{
			name: "PostFilter before another",
			plugins: schedconfig.Plugins{
				PreFilter:  schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: Name}}},
				Filter:     schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: Name}}},
				PostFilter: schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: Name}, {Name: "AfterPostFilter"}}},
			},
			wantAfter:         1,
			wantCode:          fwk.Unschedulable,
			wantUnschedulable: map[string]float64{"eu": 1, "gpu": 0},
		},
		{
			name: "filter only",
			plugins: schedconfig.Plugins{
				Filter:     schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: Name}}},
				PostFilter: schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: "AfterPostFilter"}}},
			},
			wantAfter:         1,
			wantCode:          fwk.Unschedulable,
			wantUnschedulable: map[string]float64{"eu": 0, "gpu": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			after := &afterPostFilter{}
			registry := frameworkruntime.Registry{
				Name:               New,
				queuesort.Name:     queuesort.New,
				defaultbinder.Name: defaultbinder.New,
				"AfterPostFilter": func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
					return after, nil
				},
			}
			tc.plugins.QueueSort = schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: queuesort.Name}}}
			tc.plugins.Bind = schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: defaultbinder.Name}}}
			name := uniqueProfile(t)
			profile := &schedconfig.KubeSchedulerProfile{
				SchedulerName: name,
				Plugins:       &tc.plugins,
				PluginConfig:  []schedconfig.PluginConfig{{Name: Name, Args: metricArgs()}},
			}
			snapshot := cache.NewSnapshot(nil, []*v1.Node{usGPU})
			f, err := frameworkruntime.NewFramework(ctx, registry, profile, frameworkruntime.WithSnapshotSharedLister(snapshot))
			if err != nil {
				t.Fatal(err)
			}
			pod := st.MakePod().Name("p").Namespace("default").Label("placement", "eu").Obj()
			nodes := nodeInfos(usGPU)
			state := framework.NewCycleState()
			if _, status, _ := f.RunPreFilterPlugins(ctx, state, pod); !status.IsSuccess() {
				t.Fatalf("PreFilter: %v", status)
			}
			status := f.RunFilterPlugins(ctx, state, pod, nodes[0])
			if diff := cmp.Diff([]string{fmt.Sprintf(ErrReasonFormat, "eu")}, status.Reasons()); diff != "" {
				t.Fatalf("Filter reasons (-want +got):\n%s", diff)
			}
			_, status = f.RunPostFilterPlugins(ctx, state, pod, framework.NewDefaultNodeToStatus())
			if status.Code() != tc.wantCode {
				t.Errorf("PostFilter: got %v, want code %v", status, tc.wantCode)
			}
			if after.called != tc.wantAfter {
				t.Errorf("the PostFilter plugin after PlacementPolicy ran %d times, want %d", after.called, tc.wantAfter)
			}
			if diff := cmp.Diff(tc.wantUnschedulable, ruleCounts(t, "placementpolicy_unschedulable_total", name)); diff != "" {
				t.Errorf("unschedulable_total (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPostFilterWithoutState: a caller with no cycle state (or one PreFilter
// did not write) gets Unschedulable and counts nothing.
func TestPostFilterWithoutState(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	profile := uniqueProfile(t)
	pl := newProfilePlugin(t, ctx, profile, metricArgs())
	pod := st.MakePod().Name("p").Namespace("default").Label("placement", "eu").Obj()
	for _, state := range []fwk.CycleState{nil, framework.NewCycleState()} {
		if _, status := pl.PostFilter(ctx, state, pod, framework.NewDefaultNodeToStatus()); status.Code() != fwk.Unschedulable {
			t.Errorf("PostFilter(state %v): got %v, want Unschedulable", state, status)
		}
	}
	if diff := cmp.Diff(map[string]float64{"eu": 0, "gpu": 0}, ruleCounts(t, "placementpolicy_unschedulable_total", profile)); diff != "" {
		t.Errorf("unschedulable_total (-want +got):\n%s", diff)
	}
}
