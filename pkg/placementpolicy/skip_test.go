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
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// countingPolicy counts the framework's calls of Filter, Score and
// NormalizeScore: the work a Skip from PreFilter or PreScore must spare.
type countingPolicy struct {
	*PlacementPolicy
	filters, scores, normalizes atomic.Int64
}

func (c *countingPolicy) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	c.filters.Add(1)
	return c.PlacementPolicy.Filter(ctx, state, pod, ni)
}

func (c *countingPolicy) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	c.scores.Add(1)
	return c.PlacementPolicy.Score(ctx, state, pod, ni)
}

// ScoreExtensions returns c, so that NormalizeScore is counted too.
func (c *countingPolicy) ScoreExtensions() fwk.ScoreExtensions { return c }

func (c *countingPolicy) NormalizeScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	c.normalizes.Add(1)
	return c.PlacementPolicy.NormalizeScore(ctx, state, pod, scores)
}

// calls is a snapshot of a countingPolicy's counters.
type calls struct{ Filter, Score, NormalizeScore int64 }

func (c *countingPolicy) calls() calls {
	return calls{c.filters.Load(), c.scores.Load(), c.normalizes.Load()}
}

// cycleResult is what one scheduling cycle through the framework shows.
type cycleResult struct {
	skipFilter, skipScore bool
	feasible              []string
	scores                map[string]int64
}

// skipFramework runs the plugin, built by New with args, in a framework
// over nodes, enabled at PreFilter, Filter, PreScore and Score.
type skipFramework struct {
	t     *testing.T
	ctx   context.Context
	f     framework.Framework
	pl    *countingPolicy
	nodes []fwk.NodeInfo
}

func newSkipFramework(t *testing.T, args *config.PlacementPolicyArgs, nodes ...*v1.Node) *skipFramework {
	t.Helper()
	schedmetrics.Register() // the framework reports to the scheduler's metrics
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	sf := &skipFramework{t: t, ctx: ctx, nodes: nodeInfos(nodes...)}
	// The framework hands the factory the profile's decoded args; the
	// test's typed args go to the real constructor instead.
	newPolicy := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := New(ctx, args, h)
		if err != nil {
			return nil, err
		}
		sf.pl = &countingPolicy{PlacementPolicy: p.(*PlacementPolicy)}
		return sf.pl, nil
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(Name, newPolicy, "PreFilter", "Filter", "PreScore", "Score"),
	}, uniqueProfile(t), frameworkruntime.WithSnapshotSharedLister(cache.NewSnapshot(nil, nodes)))
	if err != nil {
		t.Fatal(err)
	}
	sf.f = f
	return sf
}

// cycle runs PreFilter, Filter on every node, PreScore and Score (with
// NormalizeScore) for pod, as the scheduler does when more than one node
// is feasible, and reports whether the framework marked the plugin skipped
// at filter and at score, the nodes that passed and their scores.
func (sf *skipFramework) cycle(pod *v1.Pod) cycleResult {
	sf.t.Helper()
	ctx, f := sf.ctx, sf.f
	state := framework.NewCycleState()
	if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
		sf.t.Fatalf("%s: PreFilter: %v", pod.Name, s)
	}
	var feasible []fwk.NodeInfo
	r := cycleResult{scores: map[string]int64{}}
	for _, ni := range sf.nodes {
		if s := f.RunFilterPlugins(ctx, state, pod, ni); s.IsSuccess() {
			feasible = append(feasible, ni)
			r.feasible = append(r.feasible, ni.Node().Name)
		}
	}
	if s := f.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		sf.t.Fatalf("%s: PreScore: %v", pod.Name, s)
	}
	scores, s := f.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		sf.t.Fatalf("%s: Score: %v", pod.Name, s)
	}
	for _, ns := range scores {
		r.scores[ns.Name] = ns.TotalScore
	}
	r.skipFilter = state.GetSkipFilterPlugins().Has(Name)
	r.skipScore = state.GetSkipScorePlugins().Has(Name)
	return r
}

// skipNodes are three nodes of two regions and two capacity types.
func skipNodes() []*v1.Node {
	return []*v1.Node{
		node("eu-spot", regionKey, "eu-west-1", "capacity", "spot"),
		node("eu-on-demand", regionKey, "eu-west-1", "capacity", "on-demand"),
		node("us-spot", regionKey, "us-east-1", "capacity", "spot"),
	}
}

// TestFrameworkSkipsWithoutRules runs whole cycles through the framework
// for a profile without rules: whatever the pod, the framework marks the
// plugin skipped at filter and at score and never calls Filter, Score or
// NormalizeScore.
func TestFrameworkSkipsWithoutRules(t *testing.T) {
	nodes := skipNodes()
	sf := newSkipFramework(t, defaultArgs(), nodes...)
	pods := []*v1.Pod{
		st.MakePod().Name("plain").Namespace("default").Obj(),
		st.MakePod().Name("labelled").Namespace("payments").Label("app", "x").Label("workload", "batch").Obj(),
		st.MakePod().Name("system").Namespace("kube-system").Label("tier", "system").Obj(),
		st.MakePod().Name("daemon").Namespace("default").OwnerReference("ds", daemonSetKind).Obj(),
	}
	for range 3 {
		for _, pod := range pods {
			r := sf.cycle(pod)
			if !r.skipFilter || !r.skipScore || len(r.feasible) != len(nodes) {
				t.Fatalf("%s: skipped at filter %v, at score %v, %d nodes feasible; want true, true, %d",
					pod.Name, r.skipFilter, r.skipScore, len(r.feasible), len(nodes))
			}
		}
	}
	if got := sf.pl.calls(); got != (calls{}) {
		t.Errorf("no rules: the framework called the plugin %+v; want no call", got)
	}
}

// TestFrameworkSkipsPodsNoRuleSelects runs cycles for pods that a Require
// and a Prefer rule select (x) and pods they do not (by the gate, by the
// selectors, by an excluded namespace), in turns: each cycle of the latter
// skips the plugin at filter and score and calls nothing; each cycle of x
// filters every node and scores every feasible one. A pod only the Require
// rule selects is filtered and skipped at score.
func TestFrameworkSkipsPodsNoRuleSelects(t *testing.T) {
	args := defaultArgs()
	args.ExcludedNamespaces = []string{"kube-system"}
	args.Rules = []config.PlacementRule{
		{Name: "x-in-eu", PodSelector: selector("app", "x"), NodeSelector: inRegions("eu-west-1"), Action: config.PlacementRequire},
		{Name: "x-prefers-spot", PodSelector: selector("app", "x", "workload", "batch"), NodeSelector: selector("capacity", "spot"), Action: config.PlacementPrefer, Weight: 10},
	}
	nodes := skipNodes()
	sf := newSkipFramework(t, args, nodes...)
	x := st.MakePod().Name("x").Namespace("default").Label("app", "x").Label("workload", "batch").Obj()
	requiredOnly := st.MakePod().Name("x-required-only").Namespace("default").Label("app", "x").Obj()
	ys := []*v1.Pod{
		// No label key a rule needs: the gate stops it.
		st.MakePod().Name("y-unlabelled").Namespace("default").Obj(),
		// The key, not the value: the gate passes it, no selector does.
		st.MakePod().Name("y-other-app").Namespace("default").Label("app", "y").Obj(),
		// The rules' labels in an excluded namespace.
		st.MakePod().Name("y-excluded").Namespace("kube-system").Label("app", "x").Obj(),
	}

	skipY := func(round int) {
		t.Helper()
		before := sf.pl.calls()
		for _, y := range ys {
			r := sf.cycle(y)
			if !r.skipFilter || !r.skipScore || len(r.feasible) != len(nodes) {
				t.Errorf("round %d, %s: skipped at filter %v, at score %v, %d nodes feasible; want true, true, %d",
					round, y.Name, r.skipFilter, r.skipScore, len(r.feasible), len(nodes))
			}
		}
		if got := sf.pl.calls(); got != before {
			t.Errorf("round %d: pods no rule selects: calls went from %+v to %+v; want no call", round, before, got)
		}
	}
	for round := range 2 {
		skipY(round)
		before := sf.pl.calls()
		r := sf.cycle(x)
		if r.skipFilter || r.skipScore {
			t.Fatalf("round %d, x: skipped at filter %v, at score %v; want neither", round, r.skipFilter, r.skipScore)
		}
		if diff := cmp.Diff([]string{"eu-spot", "eu-on-demand"}, r.feasible); diff != "" {
			t.Errorf("round %d, x: feasible nodes (-want +got):\n%s", round, diff)
		}
		// Weight 1 in the profile: the normalized score is the total.
		if diff := cmp.Diff(map[string]int64{"eu-spot": fwk.MaxNodeScore, "eu-on-demand": 0}, r.scores); diff != "" {
			t.Errorf("round %d, x: scores (-want +got):\n%s", round, diff)
		}
		after := sf.pl.calls()
		want := calls{Filter: before.Filter + int64(len(nodes)), Score: before.Score + 2, NormalizeScore: before.NormalizeScore + 1}
		if after != want {
			t.Errorf("round %d, x: calls went from %+v to %+v; want %+v (Filter on every node, Score on every feasible one)",
				round, before, after, want)
		}

		r = sf.cycle(requiredOnly)
		if r.skipFilter || !r.skipScore || len(r.feasible) != 2 {
			t.Errorf("round %d, %s: skipped at filter %v, at score %v, %d nodes feasible; want false, true, 2",
				round, requiredOnly.Name, r.skipFilter, r.skipScore, len(r.feasible))
		}
		if got, want := sf.pl.calls(), (calls{Filter: after.Filter + int64(len(nodes)), Score: after.Score, NormalizeScore: after.NormalizeScore}); got != want {
			t.Errorf("round %d, %s: calls went from %+v to %+v; want %+v (Filter on every node, no Score)",
				round, requiredOnly.Name, after, got, want)
		}
	}
	skipY(2)
}
