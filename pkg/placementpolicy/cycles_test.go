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
	"testing"

	v1 "k8s.io/api/core/v1"
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
)

// TestCyclesOnTheFrameworksGoroutines runs scheduling cycles through a real
// framework, on the goroutines the scheduler uses: PreFilter and PreScore on
// the caller's, Filter over every node on the framework's parallelizer (as
// the scheduler's findNodesThatPassFilters does), Score through
// RunScorePlugins, which runs each node on the parallelizer too. Pods the
// gate stops alternate with pods that have a Require rule (Filter reads the
// cycle state on many goroutines) and a Prefer rule (Score does). Under
// -race (make unit-test) this checks that the plugin shares nothing across
// goroutines unguarded; the Filter results and scores show that each cycle
// answers for its own pod.
func TestCyclesOnTheFrameworksGoroutines(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	schedmetrics.Register() // the framework reports to the scheduler's metrics
	registry := frameworkruntime.Registry{Name: New, queuesort.Name: queuesort.New, defaultbinder.Name: defaultbinder.New}
	enable := func(name string) schedconfig.PluginSet {
		return schedconfig.PluginSet{Enabled: []schedconfig.Plugin{{Name: name, Weight: 1}}}
	}
	profile := &schedconfig.KubeSchedulerProfile{
		SchedulerName: uniqueProfile(t),
		Plugins: &schedconfig.Plugins{
			QueueSort: enable(queuesort.Name),
			PreFilter: enable(Name),
			Filter:    enable(Name),
			PreScore:  enable(Name),
			Score:     enable(Name),
			Bind:      enable(defaultbinder.Name),
		},
		PluginConfig: []schedconfig.PluginConfig{{Name: Name, Args: metricArgs()}},
	}
	var nodes []*v1.Node
	for i := range 32 {
		region, capacity := "eu-west-1", "spot"
		if i%2 == 1 {
			region = "us-east-1"
		}
		if i%4 >= 2 {
			capacity = "on-demand"
		}
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i), "topology.kubernetes.io/region", region, "capacity", capacity))
	}
	f, err := frameworkruntime.NewFramework(ctx, registry, profile, frameworkruntime.WithSnapshotSharedLister(cache.NewSnapshot(nil, nodes)))
	if err != nil {
		t.Fatal(err)
	}
	infos := nodeInfos(nodes...)

	kinds := []struct {
		labels map[string]string
		// fits reports whether a node passes the pod's Require rules;
		// preferred whether it matches its Prefer rule (nil: none).
		fits, preferred func(*v1.Node) bool
	}{
		{labels: nil, fits: func(*v1.Node) bool { return true }},
		{labels: map[string]string{"placement": "eu"}, fits: func(n *v1.Node) bool { return n.Labels["topology.kubernetes.io/region"] == "eu-west-1" }},
		{labels: map[string]string{"app": "web"}, fits: func(*v1.Node) bool { return true }},
		{labels: map[string]string{"workload": "batch"}, fits: func(*v1.Node) bool { return true }, preferred: func(n *v1.Node) bool { return n.Labels["capacity"] == "spot" }},
	}
	for i := range 40 {
		kind := kinds[i%len(kinds)]
		pod := st.MakePod().Name(fmt.Sprintf("p%d", i)).UID(fmt.Sprintf("p%d", i)).Namespace("default").Labels(kind.labels).Obj()
		state := framework.NewCycleState()
		if _, status, _ := f.RunPreFilterPlugins(ctx, state, pod); !status.IsSuccess() {
			t.Fatalf("%s: PreFilter: %v", pod.Name, status)
		}
		passed := make([]bool, len(infos))
		f.Parallelizer().Until(ctx, len(infos), func(j int) {
			passed[j] = f.RunFilterPlugins(ctx, state, pod, infos[j]).IsSuccess()
		}, "Filter")
		var feasible []fwk.NodeInfo
		for j, ni := range infos {
			if passed[j] != kind.fits(ni.Node()) {
				t.Errorf("%s: Filter(%s) passed = %v, want %v", pod.Name, ni.Node().Name, passed[j], !passed[j])
			}
			if passed[j] {
				feasible = append(feasible, ni)
			}
		}
		if status := f.RunPreScorePlugins(ctx, state, pod, feasible); !status.IsSuccess() {
			t.Fatalf("%s: PreScore: %v", pod.Name, status)
		}
		if skipped, want := state.GetSkipScorePlugins().Has(Name), kind.preferred == nil; skipped != want {
			t.Errorf("%s: PreScore skipped = %v, want %v", pod.Name, skipped, want)
		}
		scores, status := f.RunScorePlugins(ctx, state, pod, feasible)
		if !status.IsSuccess() {
			t.Fatalf("%s: Score: %v", pod.Name, status)
		}
		for j, s := range scores {
			want := int64(0)
			if kind.preferred != nil && kind.preferred(feasible[j].Node()) {
				want = fwk.MaxNodeScore
			}
			if s.TotalScore != want {
				t.Errorf("%s: score of %s = %d, want %d", pod.Name, s.Name, s.TotalScore, want)
			}
		}
	}
}
