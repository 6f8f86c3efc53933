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
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/podgrouptest"
)

// The benchmarks share one cluster: benchNodes nodes holding benchPodsPerNode
// running pods each, in a scheduler snapshot.
const (
	benchNodes       = 5000
	benchPodsPerNode = 30
)

type benchCluster struct {
	nodes     []*v1.Node
	pods      []*v1.Pod
	snapshot  *cache.Snapshot
	nodeInfos []fwk.NodeInfo
	// pod is the pod being scheduled: it carries the label the existing
	// pods carry, requests resources and has a soft spread constraint on
	// kubernetes.io/hostname, which only PodTopologySpread reads.
	pod *v1.Pod
}

var (
	clusterOnce sync.Once
	cluster     *benchCluster
)

var benchLabelSelector = st.MakeLabelSelector().Exists("app").Obj()

// benchPod returns a running pod of the benchmark's app in namespace
// default, bound to nodeName.
func benchPod(i int, nodeName string) *v1.Pod {
	name := fmt.Sprintf("pod-%d", i)
	return st.MakePod().Name(name).Namespace("default").UID(name).Node(nodeName).
		Label("app", "bench").Phase(v1.PodRunning).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "500Mi"}).Obj()
}

func getCluster(b *testing.B) *benchCluster {
	b.Helper()
	clusterOnce.Do(func() {
		// In-tree plugins report to the scheduler's metrics.
		schedmetrics.InitMetrics()
		c := &benchCluster{}
		for i := range benchNodes {
			name := fmt.Sprintf("node-%d", i)
			c.nodes = append(c.nodes, st.MakeNode().Name(name).Label(v1.LabelHostname, name).
				Capacity(map[v1.ResourceName]string{v1.ResourcePods: "110", v1.ResourceCPU: "4", v1.ResourceMemory: "32Gi"}).Obj())
		}
		for i := range benchNodes * benchPodsPerNode {
			c.pods = append(c.pods, benchPod(i, c.nodes[i%benchNodes].Name))
		}
		c.snapshot = cache.NewSnapshot(c.pods, c.nodes)
		for _, n := range c.nodes {
			ni, err := c.snapshot.NodeInfos().Get(n.Name)
			if err != nil {
				panic(err)
			}
			c.nodeInfos = append(c.nodeInfos, ni)
		}
		c.pod = st.MakePod().Name("incoming").Namespace("default").UID("incoming").Label("app", "bench").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "500Mi"}).
			SpreadConstraint(1, v1.LabelHostname, v1.ScheduleAnyway, benchLabelSelector, nil, nil, nil, nil).Obj()
		cluster = c
	})
	return cluster
}

// newBenchPlugin builds the plugin on the cluster's snapshot. warm scores
// every node once, so that each holds a memo, as after the first cycle.
func newBenchPlugin(b *testing.B, ctx context.Context, args *config.NodeLessPodsArgs, c *benchCluster, warm bool) *NodeLessPods {
	b.Helper()
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithSnapshotSharedLister(c.snapshot))
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(ctx, args, fh)
	if err != nil {
		b.Fatal(err)
	}
	pl := p.(*NodeLessPods)
	if warm {
		state := framework.NewCycleState()
		for _, ni := range c.nodeInfos {
			if _, s := pl.Score(ctx, state, c.pod, ni); !s.IsSuccess() {
				b.Fatal(s)
			}
		}
	}
	return pl
}

// benchContext returns a context whose logger reports to b at verbosity 1:
// ktesting's default (5) would make NormalizeScore log every node, and 1
// keeps New's V(2) line out of the benchmark output. Nothing on the measured
// paths logs below V(4), so this is what the scheduler's production level (2)
// costs too.
func benchContext(b *testing.B) context.Context {
	logger := ktesting.NewLogger(b, ktesting.NewConfig(ktesting.Verbosity(1)))
	return klog.NewContext(context.Background(), logger)
}

var selectorArgs = func(a *config.NodeLessPodsArgs) {
	a.PodSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"bench", "web"}},
	}}
	a.Namespaces = []string{"default", "team-a"}
}

// BenchmarkScore measures one Score call, on the 5,000 nodes in turn. hit
// reads a node's memo; podGroup is the same in a pod-group cycle; miss gives
// the node a new generation first (what the scheduler's cache does when the
// node changes), so Score scans the node's 30 pods: the cost the memo saves.
func BenchmarkScore(b *testing.B) {
	c := getCluster(b)
	for _, bc := range []struct {
		name     string
		args     func(*config.NodeLessPodsArgs)
		miss     bool
		podGroup bool
	}{
		{name: "hit"},
		{name: "hit/podSelector", args: selectorArgs},
		{name: "hit/relativeToCapacity", args: func(a *config.NodeLessPodsArgs) { a.RelativeToCapacity = true }},
		{name: "hit/podGroup", podGroup: true},
		{name: "miss", miss: true},
		{name: "miss/podSelector", args: selectorArgs, miss: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := benchContext(b)
			pl := newBenchPlugin(b, ctx, testArgs(bc.args), c, true)
			if got := pl.counts.Count(c.nodeInfos[0], false); got != benchPodsPerNode {
				b.Fatalf("node-0 counts %d pods, want %d", got, benchPodsPerNode)
			}
			state := framework.NewCycleState()
			if bc.podGroup {
				podgrouptest.Skip(b)
				podgrouptest.MarkCycle(state)
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if bc.miss {
					c.nodeInfos[i].(*framework.NodeInfo).Generation++
				}
				if _, s := pl.Score(ctx, state, c.pod, c.nodeInfos[i]); !s.IsSuccess() {
					b.Fatal(s)
				}
				if i++; i == len(c.nodeInfos) {
					i = 0
				}
			}
		})
	}
	// The scheduler scores nodes from up to 16 goroutines: hits must not
	// serialize them.
	b.Run("hit/parallel", func(b *testing.B) {
		ctx := benchContext(b)
		pl := newBenchPlugin(b, ctx, testArgs(nil), c, true)
		var worker atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			state := framework.NewCycleState()
			i := int(worker.Add(1)) * 997
			for pb.Next() {
				if _, s := pl.Score(ctx, state, c.pod, c.nodeInfos[i%benchNodes]); !s.IsSuccess() {
					b.Error(s)
					return
				}
				i++
			}
		})
	})
}

// BenchmarkMemoMemory reports the heap the memos take per node: a new plugin
// scores every node of the 150,000-pod cluster once. Nothing is kept per pod.
func BenchmarkMemoMemory(b *testing.B) {
	c := getCluster(b)
	ctx := benchContext(b)
	var before, after runtime.MemStats
	var keep []*NodeLessPods
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		keep = append(keep, newBenchPlugin(b, ctx, testArgs(nil), c, true))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep))/benchNodes, "B/node")
	runtime.KeepAlive(keep)
}

// BenchmarkNormalizeScore normalizes the loads of 5,000 nodes.
func BenchmarkNormalizeScore(b *testing.B) {
	ctx := benchContext(b)
	for _, mode := range []config.NodeLessPodsMode{config.NodeLessPodsLeastPods, config.NodeLessPodsMostPods} {
		b.Run(string(mode)+"/5000nodes", func(b *testing.B) {
			pl := &NodeLessPods{mode: mode}
			loads := make(fwk.NodeScoreList, benchNodes)
			for i := range loads {
				loads[i] = fwk.NodeScore{Name: fmt.Sprintf("node-%d", i), Score: int64(i*7919) % 111}
			}
			scores := make(fwk.NodeScoreList, len(loads))
			pod := &v1.Pod{}
			for b.Loop() {
				copy(scores, loads)
				if s := pl.NormalizeScore(ctx, nil, pod, scores); !s.IsSuccess() {
					b.Fatal(s)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchNodes, "ns/node")
		})
	}
}

var benchNodeNames = func() []string {
	names := make([]string, benchNodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	return names
}()

// BenchmarkCycle compares what one scheduling cycle costs each scorer over
// the same 5,000 nodes and 150,000 pods: PreScore once (when the plugin has
// one; NodeLessPods has none), Score on every node and NormalizeScore (when
// it has one). ns/node is the cycle's cost divided by the number of nodes.
func BenchmarkCycle(b *testing.B) {
	c := getCluster(b)
	ctx := benchContext(b)

	b.Run("NodeLessPods", func(b *testing.B) {
		pl := newBenchPlugin(b, ctx, testArgs(nil), c, true)
		runCycle(b, ctx, c, pl, nil)
	})

	b.Run("PodTopologySpread-soft-hostname", func(b *testing.B) {
		informerFactory := informers.NewSharedInformerFactory(clientsetfake.NewClientset(), 0)
		fh, err := frameworkruntime.NewFramework(ctx, nil, nil,
			frameworkruntime.WithSnapshotSharedLister(c.snapshot),
			frameworkruntime.WithInformerFactory(informerFactory))
		if err != nil {
			b.Fatal(err)
		}
		p, err := podtopologyspread.New(ctx, &schedconfig.PodTopologySpreadArgs{DefaultingType: schedconfig.ListDefaulting}, fh, plfeature.Features{})
		if err != nil {
			b.Fatal(err)
		}
		informerFactory.Start(ctx.Done())
		informerFactory.WaitForCacheSync(ctx.Done())
		runCycle(b, ctx, c, p.(fwk.ScorePlugin), p.(fwk.PreScorePlugin))
	})

	b.Run("NodeResourcesBalancedAllocation", func(b *testing.B) {
		fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithSnapshotSharedLister(c.snapshot))
		if err != nil {
			b.Fatal(err)
		}
		p, err := noderesources.NewBalancedAllocation(ctx, &schedconfig.NodeResourcesBalancedAllocationArgs{
			Resources: []schedconfig.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}},
		}, fh, plfeature.Features{})
		if err != nil {
			b.Fatal(err)
		}
		runCycle(b, ctx, c, p.(fwk.ScorePlugin), p.(fwk.PreScorePlugin))
	})
}

func runCycle(b *testing.B, ctx context.Context, c *benchCluster, pl fwk.ScorePlugin, pre fwk.PreScorePlugin) {
	b.Helper()
	scores := make(fwk.NodeScoreList, len(c.nodeInfos))
	for b.Loop() {
		state := framework.NewCycleState()
		if pre != nil {
			if s := pre.PreScore(ctx, state, c.pod, c.nodeInfos); !s.IsSuccess() {
				b.Fatalf("PreScore: %v", s)
			}
		}
		for i, ni := range c.nodeInfos {
			score, s := pl.Score(ctx, state, c.pod, ni)
			if !s.IsSuccess() {
				b.Fatalf("Score: %v", s)
			}
			scores[i] = fwk.NodeScore{Name: ni.Node().Name, Score: score}
		}
		if ext := pl.ScoreExtensions(); ext != nil {
			if s := ext.NormalizeScore(ctx, state, c.pod, scores); !s.IsSuccess() {
				b.Fatalf("NormalizeScore: %v", s)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.nodeInfos)), "ns/node")
}
