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
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientcache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// skips reports whether PreFilter and PreScore both skip pod, and fails t
// when they disagree or return anything but Success or Skip.
func skips(t *testing.T, ctx context.Context, pl *MaintenanceWindow, pod *v1.Pod) bool {
	t.Helper()
	_, pre := pl.PreFilter(ctx, framework.NewCycleState(), pod, nil)
	score := pl.PreScore(ctx, framework.NewCycleState(), pod, nil)
	for _, s := range []*fwk.Status{pre, score} {
		if !s.IsSuccess() && !s.IsSkip() {
			t.Fatalf("got %v, want Success or Skip", s)
		}
	}
	if pre.IsSkip() != score.IsSkip() {
		t.Fatalf("PreFilter skips %v, PreScore skips %v", pre.IsSkip(), score.IsSkip())
	}
	return pre.IsSkip()
}

// waitSkips waits until the informer's events have made PreFilter and
// PreScore skip pod (want true) or not. While an event is being handled
// the two calls may see the count before and after it, so they are only
// required to agree once both have reached want.
func waitSkips(t *testing.T, ctx context.Context, pl *MaintenanceWindow, pod *v1.Pod, want bool, after string) {
	t.Helper()
	if err := waitFor(func() bool {
		_, pre := pl.PreFilter(ctx, framework.NewCycleState(), pod, nil)
		score := pl.PreScore(ctx, framework.NewCycleState(), pod, nil)
		return pre.IsSkip() == want && score.IsSkip() == want
	}); err != nil {
		t.Fatalf("after %s: PreFilter and PreScore skip %v, want %v", after, !want, want)
	}
	if got := skips(t, ctx, pl, pod); got != want {
		t.Fatalf("after %s: PreFilter and PreScore skip %v once settled, want %v", after, got, want)
	}
}

func updateNode(t *testing.T, client *fake.Clientset, n *v1.Node) {
	t.Helper()
	if _, err := client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createNode(t *testing.T, client *fake.Clientset, n *v1.Node) {
	t.Helper()
	if _, err := client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSkipWhileNoNodeHasAWindow follows the count through the node
// informer: PreFilter and PreScore skip while no node carries a value in a
// source, and stop skipping when the first one does.
func TestSkipWhileNoNodeHasAWindow(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	args := defaultArgs(func(a *config.MaintenanceWindowArgs) {
		a.ExemptPodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kured"}}
	})
	pl, _, h := newPlugin(t, args, node("plain", ""))
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	exempt := st.MakePod().Name("kured").Namespace("default").Label("app", "kured").Obj()
	if !skips(t, ctx, pl, pod) {
		t.Fatal("no node with a window: PreFilter and PreScore do not skip")
	}
	signature, _ := pl.SignPod(ctx, pod)

	steps := []struct {
		what string
		do   func()
		want bool // skips
	}{
		{"a window annotated", func() { updateNode(t, h.client, node("plain", interval(5, 6))) }, false},
		{"the annotation removed", func() { updateNode(t, h.client, node("plain", "")) }, true},
		{"a node added with a malformed window", func() { createNode(t, h.client, node("bad", "soon")) }, false},
		{"that node deleted", func() {
			if err := h.client.CoreV1().Nodes().Delete(ctx, "bad", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"GKE's label set", func() { updateNode(t, h.client, gkeNode("plain", gkeRecorded, "")) }, false},
		{"the label removed", func() { updateNode(t, h.client, node("plain", "")) }, true},
		{"a node added with a window", func() { createNode(t, h.client, node("w", interval(-1, 1))) }, false},
	}
	for _, step := range steps {
		step.do()
		waitSkips(t, ctx, pl, pod, step.want, step.what)
		if !skips(t, ctx, pl, exempt) {
			t.Fatalf("after %s: an exempt pod is not skipped", step.what)
		}
	}

	// The pod's signature does not depend on the cluster's windows.
	if got, _ := pl.SignPod(ctx, pod); !cmp.Equal(got, signature) {
		t.Errorf("SignPod with a window %v, without %v", got, signature)
	}

	// A deletion seen only through a tombstone (the watch missed it).
	pl.signals.observe(clientcache.DeletedFinalStateUnknown{Key: "w", Obj: node("w", interval(-1, 1))}, false)
	if !skips(t, ctx, pl, pod) {
		t.Error("after a tombstone for the last node with a window: no skip")
	}
}

// TestSkipCountsOnlyTheSourcesRead: with providerSignals off, GKE's label
// is no signal; a horizon of 0 skips PreScore whatever the nodes carry.
func TestSkipCountsOnlyTheSourcesRead(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	noProvider, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.ProviderSignals = false }),
		gkeNode("g", gkeRecorded, ""))
	if !skips(t, ctx, noProvider, pod) {
		t.Error("providerSignals off, only GKE's label on a node: no skip")
	}
	noHorizon, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.Horizon.Duration = 0 }),
		node("w", interval(-1, 1)))
	if _, s := noHorizon.PreFilter(ctx, nil, pod, nil); !s.IsSuccess() {
		t.Errorf("horizon 0, a node with a window: PreFilter %v, want Success", s)
	}
	if !noHorizon.PreScore(ctx, nil, pod, nil).IsSkip() {
		t.Error("horizon 0: PreScore does not skip")
	}
}

// TestNoSkipWithoutNodeInformer: without informers nothing counts the
// windows, so the plugin never skips for want of them.
func TestNoSkipWithoutNodeInformer(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, err := newWithClock(ctx, defaultArgs(nil), &fakeHandle{}, testingclock.NewFakeClock(now))
	if err != nil {
		t.Fatal(err)
	}
	if skips(t, ctx, pl, st.MakePod().Name("p").Namespace("default").Obj()) {
		t.Error("no node informer: PreFilter and PreScore skip")
	}
}

// countingMW counts the framework's calls of Filter and Score.
type countingMW struct {
	*MaintenanceWindow
	filters, scores atomic.Int64
}

func (c *countingMW) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	c.filters.Add(1)
	return c.MaintenanceWindow.Filter(ctx, state, pod, ni)
}

func (c *countingMW) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	c.scores.Add(1)
	return c.MaintenanceWindow.Score(ctx, state, pod, ni)
}

// TestFrameworkSkipsFilterAndScoreWithoutWindows runs whole cycles through
// the framework: while no node has a window it calls neither Filter nor
// Score of the plugin, and it calls both again in the first cycle after a
// window appears.
func TestFrameworkSkipsFilterAndScoreWithoutWindows(t *testing.T) {
	metrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	nodes := []*v1.Node{node("a", ""), node("b", "")}
	client := fake.NewClientset()
	for _, n := range nodes {
		createNode(t, client, n)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.Core().V1().Pods().Informer()
	var pl *countingMW
	newMW := func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		mw, err := newWithClock(ctx, obj, h, testingclock.NewFakeClock(now))
		pl = &countingMW{MaintenanceWindow: mw}
		return pl, err
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(Name, newMW, "PreFilter", "Filter", "PreScore", "Score"),
	}, "custom-scheduler",
		frameworkruntime.WithSnapshotSharedLister(cache.NewSnapshot(nil, nodes)),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithPodNominator(noNominations{}),
	)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() { cancel(); <-retriesDone(pl.MaintenanceWindow); close(stop); factory.Shutdown() }()
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	if err := waitFor(func() bool { return pl.signals.reg.HasSynced() }); err != nil {
		t.Fatal("the node handler never synced")
	}
	pod := st.MakePod().Name("p").Namespace("default").Obj()

	// cycle runs PreFilter, Filter on every node, PreScore and Score, and
	// returns whether the framework marked the plugin skipped at filter
	// and at score, and the nodes that passed.
	cycle := func(nodes ...*v1.Node) (skipFilter, skipScore bool, feasible []fwk.NodeInfo) {
		t.Helper()
		state := framework.NewCycleState()
		if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
			t.Fatalf("PreFilter: %v", s)
		}
		for _, n := range nodes {
			ni := nodeInfo(n)
			if s := f.RunFilterPlugins(ctx, state, pod, ni); s.IsSuccess() {
				feasible = append(feasible, ni)
			}
		}
		if s := f.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
			t.Fatalf("PreScore: %v", s)
		}
		if _, s := f.RunScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		return state.GetSkipFilterPlugins().Has(Name), state.GetSkipScorePlugins().Has(Name), feasible
	}

	for range 3 {
		skipFilter, skipScore, feasible := cycle(nodes...)
		if !skipFilter || !skipScore || len(feasible) != 2 {
			t.Fatalf("no window: skipped at filter %v, at score %v, %d nodes feasible; want true, true, 2",
				skipFilter, skipScore, len(feasible))
		}
	}
	if n, m := pl.filters.Load(), pl.scores.Load(); n != 0 || m != 0 {
		t.Fatalf("no window: Filter called %d times, Score %d times; want 0", n, m)
	}

	// A window opens on a: the next cycle filters a out and scores b.
	inWindow := node("a", interval(-1, 1))
	updateNode(t, client, inWindow)
	if err := waitFor(func() bool { return !pl.signals.none() }); err != nil {
		t.Fatal("the node handler never saw the window")
	}
	skipFilter, skipScore, feasible := cycle(inWindow, nodes[1])
	if skipFilter || skipScore {
		t.Fatalf("a window: skipped at filter %v, at score %v; want neither", skipFilter, skipScore)
	}
	if len(feasible) != 1 || feasible[0].Node().Name != "b" {
		t.Errorf("a window on a: feasible %v, want only b", feasible)
	}
	if n, m := pl.filters.Load(), pl.scores.Load(); n != 2 || m != 1 {
		t.Errorf("a window: Filter called %d times, Score %d times; want 2 and 1", n, m)
	}

	// The window's annotation removed: skipped again.
	updateNode(t, client, nodes[0])
	if err := waitFor(func() bool { return pl.signals.none() }); err != nil {
		t.Fatal("the node handler never saw the window go")
	}
	if skipFilter, skipScore, _ := cycle(nodes...); !skipFilter || !skipScore {
		t.Errorf("window removed: skipped at filter %v, at score %v; want both", skipFilter, skipScore)
	}
	if n, m := pl.filters.Load(), pl.scores.Load(); n != 2 || m != 1 {
		t.Errorf("window removed: Filter called %d times, Score %d times in all; want still 2 and 1", n, m)
	}
}
