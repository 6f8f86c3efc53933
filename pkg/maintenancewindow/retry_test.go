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
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/internal/podgrouptest"
	"github.com/adminsched/scheduler-plugins/pkg/podgroupcycle"
)

// noNominations is a PodNominator with no nominated pods.
type noNominations struct{ fwk.PodNominator }

func (noNominations) NominatedPodsForNode(string) []fwk.PodInfo { return nil }

func pendingPod(name string) *v1.Pod {
	return st.MakePod().Name(name).Namespace("default").UID(name + "-uid").Obj()
}

// reject runs one scheduling attempt's PreFilter and Filter over nodes, as
// the framework does: a fresh CycleState, marked as a pod-group cycle when
// podGroup is set. It returns the state and the statuses PostFilter gets.
func reject(t *testing.T, ctx context.Context, pl *MaintenanceWindow, pod *v1.Pod, podGroup bool, nodes []*v1.Node) (*framework.CycleState, *framework.NodeToStatus) {
	t.Helper()
	state := framework.NewCycleState()
	if podGroup {
		podgrouptest.Skip(t)
		podgrouptest.MarkCycle(state)
	}
	if _, status := pl.PreFilter(ctx, state, pod, nil); !status.IsSuccess() {
		t.Fatalf("PreFilter: %v", status)
	}
	statuses := framework.NewDefaultNodeToStatus()
	for _, n := range nodes {
		s := pl.Filter(ctx, state, pod, nodeInfo(n))
		if s.IsSuccess() {
			continue
		}
		s.SetPlugin(Name)
		statuses.Set(n.Name, s)
	}
	return state, statuses
}

// TestRetryAtWindowEnd checks that a pod rejected by windows is activated
// once, when the earliest of them ends, whichever way the cycle ends.
func TestRetryAtWindowEnd(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*v1.Node
		// filterTwice runs Filter twice per node, as the framework does
		// when nominated pods are added.
		filterTwice bool
		podGroup    bool
		// beforePostFilter is how long DefaultPreemption's PostFilter takes.
		beforePostFilter time.Duration
		end              time.Duration // the retry is due then
	}{
		{
			name:  "earliest end among the windows",
			nodes: []*v1.Node{node("a", interval(-1, 2)), node("b", interval(-1, 1)), node("c", interval(-1, 3))},
			end:   time.Hour,
		},
		{
			name:        "rejected twice on each node: one retry",
			nodes:       []*v1.Node{node("a", interval(-1, 2)), node("b", interval(-1, 1))},
			filterTwice: true,
			end:         time.Hour,
		},
		{
			// Issue 18, item 3: PostFilter judged at its own time and
			// planned nothing once the window had closed.
			name:             "window closes between Filter and PostFilter",
			nodes:            []*v1.Node{node("a", interval(-1, 0.5))},
			beforePostFilter: time.Hour,
			end:              30 * time.Minute,
		},
		{
			// Issue 18, item 4: in pod-group cycles PostFilter does not run.
			name:     "pod-group cycle, no PostFilter",
			nodes:    []*v1.Node{node("a", interval(-1, 2)), node("b", interval(0, 1))},
			podGroup: true,
			end:      time.Hour,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, clk, h := newPlugin(t, defaultArgs(nil), tc.nodes...)
			pod := pendingPod("p")
			h.addPod(t, pod)

			state, statuses := reject(t, ctx, pl, pod, tc.podGroup, tc.nodes)
			if tc.filterTwice {
				for _, n := range tc.nodes {
					pl.Filter(ctx, state, pod, nodeInfo(n))
				}
			}
			if statuses.Len() != len(tc.nodes) {
				t.Fatalf("%d nodes rejected, want %d", statuses.Len(), len(tc.nodes))
			}
			waitArmed(t, pl, now.Add(tc.end))
			clk.Step(tc.beforePostFilter)
			if !podgroupcycle.Is(state) {
				if _, status := pl.PostFilter(ctx, state, pod, statuses); status.Code() != fwk.Unschedulable {
					t.Fatalf("PostFilter: got %v, want Unschedulable", status)
				}
			}
			if early := tc.end - time.Minute - tc.beforePostFilter; early > 0 {
				clk.Step(early)
				if n := pl.pendingRetries(); n != 1 {
					t.Errorf("%d retries planned, want 1", n)
				}
				if got := h.activations(); len(got) != 0 {
					t.Fatalf("activated a minute before the window ended: %v", got)
				}
			}
			if late := tc.end - clk.Since(now); late > 0 {
				clk.Step(late)
			}
			if err := waitFor(func() bool { return len(h.activations()) > 0 }); err != nil {
				t.Fatal("the pod was not activated when its window ended")
			}
			if diff := cmp.Diff([]string{"default/p"}, h.activations()); diff != "" {
				t.Errorf("activated (-want +got):\n%s", diff)
			}
			if n := pl.pendingRetries(); n != 0 {
				t.Errorf("%d retries still planned after the activation", n)
			}
		})
	}
}

// TestRetryDropped checks that nothing is kept for a pod that needs no
// retry: bound, finished, or deleted, before or after its rejection.
// Issue 18, item 5: each kept its timer until the window ended.
func TestRetryDropped(t *testing.T) {
	bind := func(p *v1.Pod) { p.Spec.NodeName = "elsewhere" }
	fail := func(p *v1.Pod) { p.Status.Phase = v1.PodFailed }
	tests := []struct {
		name   string
		update func(*v1.Pod) // nil: the pod is deleted
		before bool          // the change happens before the rejection
	}{
		{name: "deleted after its rejection"},
		{name: "bound after its rejection", update: bind},
		{name: "finished after its rejection", update: fail},
		{name: "deleted before its rejection", before: true},
		{name: "bound before its rejection", update: bind, before: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			nodes := []*v1.Node{node("a", "2020-01-01T00:00:00Z/9999-12-31T00:00:00Z")}
			pl, _, h := newPlugin(t, defaultArgs(nil), nodes...)
			pod := pendingPod("p")
			h.addPod(t, pod)
			indexer := h.informers.Core().V1().Pods().Informer().GetIndexer()
			change := func() {
				pods := h.client.CoreV1().Pods(pod.Namespace)
				if tc.update == nil {
					if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					return
				}
				p := pod.DeepCopy()
				tc.update(p)
				if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.before {
				change()
				// The scheduler can still be in this pod's cycle when the
				// informer learns of the change.
				if err := waitFor(func() bool {
					obj, ok, _ := indexer.GetByKey("default/p")
					return !ok || settled(obj.(*v1.Pod))
				}); err != nil {
					t.Fatal("the informer never saw the change")
				}
			}
			_, statuses := reject(t, ctx, pl, pod, false, nodes)
			pl.PostFilter(ctx, framework.NewCycleState(), pod, statuses)
			if !tc.before {
				if n := pl.pendingRetries(); n != 1 {
					t.Fatalf("%d retries planned after the rejection, want 1", n)
				}
				change()
			}
			if err := waitFor(func() bool { return pl.pendingRetries() == 0 }); err != nil {
				t.Errorf("%d retries kept", pl.pendingRetries())
			}
		})
	}
}

// TestOneTimerForManyPods checks that one timer serves every pod, and that
// each is activated when its own window ends.
func TestOneTimerForManyPods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	const n = 50
	// Pod i's only node is in a window for i+1 more minutes.
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("n%02d", i), interval(-1, float64(i+1)/60))
	}
	pl, clk, h := newPlugin(t, defaultArgs(nil), nodes...)
	var want []string
	for i := range n {
		pod := pendingPod(fmt.Sprintf("p%02d", i))
		h.addPod(t, pod)
		state, statuses := reject(t, ctx, pl, pod, false, nodes[i:i+1])
		pl.PostFilter(ctx, state, pod, statuses)
		want = append(want, "default/"+pod.Name)
	}
	if got := pl.pendingRetries(); got != n {
		t.Fatalf("%d retries planned, want %d", got, n)
	}
	waitArmed(t, pl, now.Add(time.Minute))
	if got := clk.Waiters(); got != 1 {
		t.Fatalf("%d timers for %d pods, want 1", got, n)
	}
	for _, step := range []int{n / 2, n} {
		if step == n {
			waitArmed(t, pl, now.Add(time.Duration(n/2+1)*time.Minute))
		}
		clk.SetTime(now.Add(time.Duration(step) * time.Minute))
		if err := waitFor(func() bool { return len(h.activations()) == step }); err != nil {
			t.Fatalf("after %d minutes, %d pods activated, want %d", step, len(h.activations()), step)
		}
		if diff := cmp.Diff(want[:step], h.activations()); diff != "" {
			t.Errorf("after %d minutes, activated (-want +got):\n%s", step, diff)
		}
		if got := pl.pendingRetries(); got != n-step {
			t.Errorf("after %d minutes, %d retries planned, want %d", step, got, n-step)
		}
	}
}

// TestNothingAfterStop checks that the retries stop with the scheduler:
// no timer left, no activation, and nothing kept for a later rejection.
func TestNothingAfterStop(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nodes := []*v1.Node{node("a", interval(-1, 1))}
	pl, clk, h := newPluginCtx(t, ctx, defaultArgs(nil), nodes...)
	for _, name := range []string{"p", "q"} {
		h.addPod(t, pendingPod(name))
	}
	_, statuses := reject(t, ctx, pl, pendingPod("p"), false, nodes)
	pl.PostFilter(ctx, framework.NewCycleState(), pendingPod("p"), statuses)

	cancel()
	<-retriesDone(pl)
	_, statuses = reject(t, ctx, pl, pendingPod("q"), false, nodes)
	pl.PostFilter(ctx, framework.NewCycleState(), pendingPod("q"), statuses)
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers left after the scheduler stopped", n)
	}
	if n := pl.pendingRetries(); n != 0 {
		t.Errorf("%d retries kept after the scheduler stopped", n)
	}
	clk.Step(2 * time.Hour)
	if got := h.activations(); len(got) != 0 {
		t.Errorf("activated after the scheduler stopped: %v", got)
	}
}

// TestPodGroupRetryInFramework runs a pod-group member's attempt through the
// real framework, as the scheduler's pod-group cycle does (a CycleState per
// pod marked as a pod-group cycle, PreFilter, Filter with nominated pods, no
// PostFilter), and checks that the window's end activates the pod through
// the framework's handle.
func TestPodGroupRetryInFramework(t *testing.T) {
	podgrouptest.Skip(t)
	metrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nodes := []*v1.Node{node("a", interval(-1, 1)), node("b", interval(-1, 2))}
	snapshot := cache.NewSnapshot(nil, nodes)
	client := fake.NewClientset()
	for _, n := range nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.Core().V1().Pods().Informer()
	activator := &fakeHandle{}
	clk := testingclock.NewFakeClock(now)
	var pl *MaintenanceWindow
	newMW := func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		var err error
		pl, err = newWithClock(ctx, obj, h, clk)
		return pl, err
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(Name, newMW, "PreFilter", "Filter", "PostFilter"),
	}, "custom-scheduler",
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithPodActivator(activator),
		frameworkruntime.WithPodNominator(noNominations{}),
	)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() { cancel(); <-retriesDone(pl); close(stop); factory.Shutdown() }()
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	pod := pendingPod("member-0")
	(&fakeHandle{client: client, informers: factory}).addPod(t, pod)
	state := framework.NewCycleState()
	podgrouptest.MarkCycle(state)
	if _, status, _ := f.RunPreFilterPlugins(ctx, state, pod); !status.IsSuccess() {
		t.Fatalf("PreFilter: %v", status)
	}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, ni := range infos {
		if status := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); status.Code() != fwk.UnschedulableAndUnresolvable {
			t.Fatalf("Filter(%s): got %v, want UnschedulableAndUnresolvable", ni.Node().Name, status)
		}
	}
	waitArmed(t, pl, now.Add(time.Hour))
	clk.Step(time.Hour)
	if err := waitFor(func() bool { return len(activator.activations()) > 0 }); err != nil {
		t.Fatal("the pod-group member was not activated when its window ended")
	}
	if diff := cmp.Diff([]string{"default/member-0"}, activator.activations()); diff != "" {
		t.Errorf("activated (-want +got):\n%s", diff)
	}
}

// TestParallelFilterPlansTheEarliestEnd runs Filter for one cycle on the
// scheduler's 16 goroutines over nodes whose windows end one minute apart,
// in shuffled order: the retry comes at the earliest end, once.
func TestParallelFilterPlansTheEarliestEnd(t *testing.T) {
	metrics.Register()
	_, ctx := ktesting.NewTestContext(t)
	const n = 64
	nodes := make([]*v1.Node, n)
	for i, minutes := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		nodes[i] = node(fmt.Sprintf("n%02d", i), interval(-1, float64(minutes+1)/60))
	}
	pl, clk, h := newPlugin(t, defaultArgs(nil), nodes...)
	pod := pendingPod("p")
	h.addPod(t, pod)
	state := framework.NewCycleState()
	pl.PreFilter(ctx, state, pod, nil)
	parallelize.NewParallelizer(16).Until(ctx, n, func(i int) {
		if pl.Filter(ctx, state, pod, nodeInfo(nodes[i])).IsSuccess() {
			t.Errorf("node %s passed", nodes[i].Name)
		}
	}, "Filter")
	if got := pl.pendingRetries(); got != 1 {
		t.Fatalf("%d retries planned, want 1", got)
	}
	waitArmed(t, pl, now.Add(time.Minute))
	clk.Step(59 * time.Second)
	if got := h.activations(); len(got) != 0 {
		t.Fatalf("activated before the earliest window ended: %v", got)
	}
	clk.Step(time.Second)
	if err := waitFor(func() bool { return len(h.activations()) > 0 }); err != nil {
		t.Fatal("the pod was not activated when the earliest window ended")
	}
	if diff := cmp.Diff([]string{"default/p"}, h.activations()); diff != "" {
		t.Errorf("activated (-want +got):\n%s", diff)
	}
}

// TestRejectionAllocatesNoMore checks that planning retries adds no
// allocation to Filter's rejection path once the cycle has planned one.
func TestRejectionAllocatesNoMore(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	n := node("a", interval(-1, 1))
	ni := nodeInfo(n)
	pod := pendingPod("p")
	allocs := map[string]float64{}
	for _, retries := range []bool{false, true} {
		pl, _, h := newPlugin(t, defaultArgs(nil), n)
		h.addPod(t, pod)
		if !retries {
			pl.retries = nil
		}
		state := framework.NewCycleState()
		pl.PreFilter(ctx, state, pod, nil)
		pl.Filter(ctx, state, pod, ni)
		if retries {
			// The timer is armed on another goroutine, whose allocations
			// AllocsPerRun would count if it ran during the measurement.
			waitArmed(t, pl, now.Add(time.Hour))
		}
		// AllocsPerRun counts every goroutine's allocations: the least of
		// a few measurements is the one no background work (the race
		// detector's, the informers') fell into.
		least := math.Inf(1)
		for range 5 {
			least = math.Min(least, testing.AllocsPerRun(100, func() {
				if pl.Filter(ctx, state, pod, ni).IsSuccess() {
					t.Fatal("node in a window passed")
				}
			}))
		}
		allocs[fmt.Sprintf("retries=%v", retries)] = least
	}
	if diff := cmp.Diff(allocs["retries=false"], allocs["retries=true"]); diff != "" {
		t.Errorf("allocations per rejection (-without retries +with):\n%s", diff)
	}
}
