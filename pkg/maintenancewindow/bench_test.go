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
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

const regionKey = "topology.kubernetes.io/region"

// benchNodes returns NodeInfos alternately in eu-west-1 and us-east-1, each
// announcing the window value (none when empty).
func benchNodes(n int, value string) []fwk.NodeInfo {
	nodes := make([]fwk.NodeInfo, n)
	for i := range nodes {
		region := "eu-west-1"
		if i%2 == 1 {
			region = "us-east-1"
		}
		nd := node("n", value)
		nd.Labels = map[string]string{regionKey: region, "kubernetes.io/os": "linux"}
		nodes[i] = nodeInfo(nd)
	}
	return nodes
}

// withWindow is the first of nodes, for the plugin's node informer: one
// node with a window there keeps PreFilter from skipping the cycle.
func withWindow(nodes []fwk.NodeInfo) *v1.Node { return nodes[0].Node() }

// BenchmarkFilter compares MaintenanceWindow's Filter with in-tree
// NodeAffinity's on the same 100 nodes and pod, as scheduler_perf's
// MaintenanceWindow case does: every node announces a window far ahead.
func BenchmarkFilter(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	pod := st.MakePod().Name("p").Namespace("default").
		NodeAffinityIn(regionKey, []string{"eu-west-1", "eu-central-1"}, st.NodeSelectorTypeMatchExpressions).Obj()
	far := "2099-01-01T00:00:00Z/2099-01-01T04:00:00Z"

	run := func(b *testing.B, filter func(fwk.NodeInfo) *fwk.Status, nodes []fwk.NodeInfo) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range nodes {
				filter(ni)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
	}
	for _, c := range []struct{ name, value string }{{"window=far", far}, {"window=none", ""}} {
		b.Run("plugin=MaintenanceWindow/"+c.name, func(b *testing.B) {
			pl, _, _ := newPlugin(b, defaultArgs(nil))
			nodes := benchNodes(100, c.value)
			run(b, func(ni fwk.NodeInfo) *fwk.Status { return pl.Filter(ctx, nil, pod, ni) }, nodes)
		})
	}
	b.Run("plugin=NodeAffinity", func(b *testing.B) {
		p, err := nodeaffinity.New(ctx, &schedconfig.NodeAffinityArgs{}, nil, feature.Features{})
		if err != nil {
			b.Fatal(err)
		}
		nodes := benchNodes(100, far)
		state := framework.NewCycleState()
		if _, status := p.(fwk.PreFilterPlugin).PreFilter(ctx, state, pod, nodes); !status.IsSuccess() {
			b.Fatalf("PreFilter: %v", status)
		}
		na := p.(fwk.FilterPlugin)
		run(b, func(ni fwk.NodeInfo) *fwk.Status { return na.Filter(ctx, state, pod, ni) }, nodes)
	})
}

// BenchmarkFilterRejection is Filter's rejection path per node, on 100
// nodes all in an open window, one scheduling cycle per iteration.
// retries=off is Filter as it was before it planned retries (the same code
// with the retry queue off); retries=on adds a CycleState and PreFilter per
// cycle, the atomic min per rejection and one lock per cycle; state=none is
// a filter-only profile, where every rejection takes the lock. Parallel runs
// the nodes on the scheduler's 16 goroutines.
func BenchmarkFilterRejection(b *testing.B) {
	metrics.Register()          // the parallelizer reports to the scheduler's metrics
	ctx := context.Background() // no per-plan log lines in the loop
	nodes := benchNodes(100, interval(-1, 1000))
	pod := pendingPod("p")
	for _, c := range []struct {
		name               string
		retries, preFilter bool
	}{
		{name: "retries=off", retries: false, preFilter: true},
		{name: "retries=on", retries: true, preFilter: true},
		{name: "retries=on/state=none", retries: true, preFilter: false},
	} {
		for _, parallel := range []bool{false, true} {
			name := c.name
			if parallel {
				name += "/parallel=16"
			}
			b.Run(name, func(b *testing.B) {
				pl, _, h := newPlugin(b, defaultArgs(nil), withWindow(nodes))
				h.addPod(b, pod)
				if !c.retries {
					pl.retries = nil
				}
				p := parallelize.NewParallelizer(16)
				b.ReportAllocs()
				for b.Loop() {
					var state fwk.CycleState
					if c.preFilter {
						state = framework.NewCycleState()
						pl.PreFilter(ctx, state, pod, nil)
					}
					if parallel {
						p.Until(ctx, len(nodes), func(i int) { pl.Filter(ctx, state, pod, nodes[i]) }, "Filter")
						continue
					}
					for _, ni := range nodes {
						pl.Filter(ctx, state, pod, ni)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
				if c.retries && pl.pendingRetries() != 1 {
					b.Fatalf("%d retries planned, want 1", pl.pendingRetries())
				}
			})
		}
	}
}

// BenchmarkFilterRejectionPaired runs the cycles of retries=off and
// retries=on (see BenchmarkFilterRejection) alternately in one loop, so that
// a busy machine slows both alike, and reports each one's ns/node and their
// ratio.
func BenchmarkFilterRejectionPaired(b *testing.B) {
	metrics.Register()
	ctx := context.Background()
	nodes := benchNodes(100, interval(-1, 1000))
	pod := pendingPod("p")
	for _, parallel := range []bool{false, true} {
		b.Run(fmt.Sprintf("parallel=%v", parallel), func(b *testing.B) {
			off, _, _ := newPlugin(b, defaultArgs(nil), withWindow(nodes))
			off.retries = nil
			on, _, h := newPlugin(b, defaultArgs(nil), withWindow(nodes))
			h.addPod(b, pod)
			p := parallelize.NewParallelizer(16)
			cycle := func(pl *MaintenanceWindow) time.Duration {
				start := time.Now()
				state := framework.NewCycleState()
				pl.PreFilter(ctx, state, pod, nil)
				if parallel {
					p.Until(ctx, len(nodes), func(i int) { pl.Filter(ctx, state, pod, nodes[i]) }, "Filter")
				} else {
					for _, ni := range nodes {
						pl.Filter(ctx, state, pod, ni)
					}
				}
				return time.Since(start)
			}
			var tOff, tOn time.Duration
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					tOff += cycle(off)
					tOn += cycle(on)
				} else {
					tOn += cycle(on)
					tOff += cycle(off)
				}
				i++
			}
			perNode := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*len(nodes)) }
			b.ReportMetric(perNode(tOff), "off-ns/node")
			b.ReportMetric(perNode(tOn), "on-ns/node")
			b.ReportMetric(float64(tOn)/float64(tOff), "on/off")
		})
	}
}

// BenchmarkScore is MaintenanceWindow's Score per node with a far window.
func BenchmarkScore(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	pl, _, _ := newPlugin(b, defaultArgs(nil))
	nodes := benchNodes(100, "2099-01-01T00:00:00Z/2099-01-01T04:00:00Z")
	pod := &v1.Pod{}
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range nodes {
			pl.Score(ctx, nil, pod, ni)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
}

// BenchmarkFilterRuntime is one cycle's PreFilter and Filter over 100 nodes
// whose window opens in 30 minutes (avoidWithin 1h), for a pod of unknown
// runtime (rejected everywhere) and a Job's pod that ends first (admitted
// everywhere), side by side.
func BenchmarkFilterRuntime(b *testing.B) {
	metrics.Register()
	ctx := context.Background() // no per-plan log lines in the loop
	nodes := benchNodes(100, interval(0.5, 2))
	for _, c := range []struct {
		name string
		pod  *v1.Pod
	}{{"runtime=unknown", pendingPod("p")}, {"runtime=10m", jobPod("job", 600, "")}} {
		b.Run(c.name, func(b *testing.B) {
			pl, _, _ := newPlugin(b, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = time.Hour }), withWindow(nodes))
			pl.retries = nil // the retry queue's cost is BenchmarkFilterRejection's
			b.ReportAllocs()
			for b.Loop() {
				state := framework.NewCycleState()
				pl.PreFilter(ctx, state, c.pod, nil)
				for _, ni := range nodes {
					pl.Filter(ctx, state, c.pod, ni)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
		})
	}
}
