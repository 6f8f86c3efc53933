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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

const key = "scheduling.adminsched.io/maintenance-window"

// now is the fake clock's start: 2026-12-01T00:00:00Z.
var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func at(h float64) string {
	return now.Add(time.Duration(h * float64(time.Hour))).Format(time.RFC3339)
}

// interval is "START/END" for a window from h1 to h2 hours after now.
func interval(h1, h2 float64) string { return at(h1) + "/" + at(h2) }

var daemonSetKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}

func node(name, value string) *v1.Node {
	n := st.MakeNode().Name(name).Obj()
	if value != "" {
		n.Annotations = map[string]string{key: value}
	}
	return n
}

func nodeInfo(n *v1.Node) fwk.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(n)
	return ni
}

func defaultArgs(mutate func(*config.MaintenanceWindowArgs)) *config.MaintenanceWindowArgs {
	obj, err := scheme.DefaultArgs(Name)
	if err != nil {
		panic(err)
	}
	args := obj.(*config.MaintenanceWindowArgs)
	if mutate != nil {
		mutate(args)
	}
	return args
}

// fakeHandle is the part of the framework handle the plugin uses: the
// snapshot, the pod informer (on a fake clientset), and Activate, which it
// records.
type fakeHandle struct {
	fwk.Handle
	// profile is the profile the metrics count under.
	profile   string
	snapshot  *cache.Snapshot
	client    *fake.Clientset
	informers informers.SharedInformerFactory
	// kubeConfig is nil unless a test reaches an API server.
	kubeConfig *rest.Config

	mu        sync.Mutex
	activated []string
	empty     int // Activate calls with no pod
}

func (h *fakeHandle) SnapshotSharedLister() fwk.SharedLister { return h.snapshot }

func (h *fakeHandle) ProfileName() string { return h.profile }

func (h *fakeHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.informers }

func (h *fakeHandle) ClientSet() kubernetes.Interface { return h.client }

func (h *fakeHandle) KubeConfig() *rest.Config { return h.kubeConfig }

func (h *fakeHandle) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(pods) == 0 {
		h.empty++
	}
	for k := range pods {
		h.activated = append(h.activated, k)
	}
	slices.Sort(h.activated)
}

// emptyActivations returns how many Activate calls had no pod.
func (h *fakeHandle) emptyActivations() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.empty
}

func (h *fakeHandle) activations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.activated...)
}

// addPod creates pod, pending, and waits until the pod informer holds it,
// as the scheduler's does before it schedules the pod.
func (h *fakeHandle) addPod(t testing.TB, pod *v1.Pod) {
	t.Helper()
	if _, err := h.client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	indexer := h.informers.Core().V1().Pods().Informer().GetIndexer()
	if err := waitFor(func() bool {
		_, ok, _ := indexer.GetByKey(pod.Namespace + "/" + pod.Name)
		return ok
	}); err != nil {
		t.Fatalf("the informer never saw pod %s", pod.Name)
	}
}

func newPlugin(t testing.TB, args *config.MaintenanceWindowArgs, nodes ...*v1.Node) (*MaintenanceWindow, *testingclock.FakeClock, *fakeHandle) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	pl, clk, h := newPluginCtx(t, ctx, args, nodes...)
	t.Cleanup(func() {
		cancel()
		<-retriesDone(pl)
	})
	return pl, clk, h
}

// newPluginCtx is newPlugin with the scheduler's context given: cancelling
// it stops the plugin's retries.
func newPluginCtx(t testing.TB, ctx context.Context, args *config.MaintenanceWindowArgs, nodes ...*v1.Node) (*MaintenanceWindow, *testingclock.FakeClock, *fakeHandle) {
	t.Helper()
	return newPluginProfile(t, ctx, uniqueProfile(t), args, nodes...)
}

// profiles numbers the tests' profiles: counters live as long as the
// process, and go test -count=N runs a test N times in one process.
var profiles atomic.Int64

// uniqueProfile returns a profile name no other test run has used.
func uniqueProfile(t testing.TB) string {
	return fmt.Sprintf("%s#%d", t.Name(), profiles.Add(1))
}

// newPluginProfile is newPluginCtx with the profile its metrics count under
// given; newPluginCtx gives each test run a profile of its own, so that
// tests do not see each other's counts in the process-wide registry.
func newPluginProfile(t testing.TB, ctx context.Context, profile string, args *config.MaintenanceWindowArgs, nodes ...*v1.Node) (*MaintenanceWindow, *testingclock.FakeClock, *fakeHandle) {
	t.Helper()
	clk := testingclock.NewFakeClock(now)
	client := fake.NewClientset()
	h := &fakeHandle{profile: profile, snapshot: cache.NewSnapshot(nil, nodes), client: client, informers: informers.NewSharedInformerFactory(client, 0)}
	// The scheduler runs this informer whatever its plugins do.
	h.informers.Core().V1().Pods().Informer()
	// The node informer holds the snapshot's nodes, so that the plugin
	// counts their windows.
	for _, n := range nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pl, err := newWithClock(ctx, args, h, clk)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	stop := make(chan struct{})
	h.informers.Start(stop)
	h.informers.WaitForCacheSync(stop)
	if err := waitFor(func() bool { return pl.signals.reg.HasSynced() }); err != nil {
		t.Fatal("the node handler never synced")
	}
	t.Cleanup(func() {
		close(stop)
		h.informers.Shutdown()
	})
	return pl, clk, h
}

func TestParseWindows(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    []window.Window
		wantErr string
	}{
		{name: "empty", value: "", want: nil},
		// Guards the continue on a blank item: parsing goes on after it.
		{name: "blank items first and between", value: " , ," + interval(3, 4) + ", ," + interval(1, 2), want: []window.Window{{Start: now.Add(time.Hour), End: now.Add(2 * time.Hour)}, {Start: now.Add(3 * time.Hour), End: now.Add(4 * time.Hour)}}},
		{name: "one", value: interval(1, 2), want: []window.Window{{Start: now.Add(time.Hour), End: now.Add(2 * time.Hour)}}},
		{
			name:  "several, unordered, with spaces and an offset",
			value: " " + interval(5, 6) + " , 2026-12-01T02:00:00+01:00/2026-12-01T03:00:00+01:00,",
			want:  []window.Window{{Start: now.Add(time.Hour), End: now.Add(2 * time.Hour)}, {Start: now.Add(5 * time.Hour), End: now.Add(6 * time.Hour)}},
		},
		{name: "no slash", value: at(1), wantErr: "want START/END"},
		{name: "not RFC 3339", value: "tomorrow/" + at(2), wantErr: "start"},
		{name: "bad end", value: at(1) + "/2026-12-01 04:00", wantErr: "end"},
		{name: "end before start", value: interval(2, 1), wantErr: "the end is not after the start"},
		{name: "empty window", value: interval(2, 2), wantErr: "the end is not after the start"},
		{name: "one bad interval spoils the value", value: interval(1, 2) + ",soon", wantErr: `interval "soon"`},
		{name: "too many intervals", value: strings.Repeat(interval(1, 2)+",", window.MaxWindows+1), wantErr: "more than 64 intervals"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := window.Parse(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
				t.Errorf("windows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name        string
		value       string
		avoidWithin time.Duration
		want        string // "" when the node passes
	}{
		{name: "no annotation", value: "", want: ""},
		{name: "open window", value: interval(-1, 2), want: "node is in a maintenance window until 2026-12-01T02:00:00Z"},
		{name: "window opening right now", value: interval(0, 1), want: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "past window", value: interval(-3, -1), want: ""},
		{name: "window ending right now is past", value: interval(-1, 0), want: ""},
		{name: "upcoming, avoidWithin 0", value: interval(0.5, 2), want: ""},
		{name: "upcoming within avoidWithin", value: interval(0.5, 2), avoidWithin: time.Hour,
			want: "node's maintenance window opens at 2026-12-01T00:30:00Z (until 2026-12-01T02:00:00Z)"},
		{name: "upcoming beyond avoidWithin", value: interval(2, 3), avoidWithin: time.Hour, want: ""},
		{name: "several windows, one open", value: interval(-5, -4) + "," + interval(-1, 1) + "," + interval(3, 4),
			want: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "touching windows chain", value: interval(-1, 1) + "," + interval(1, 3) + "," + interval(4, 5),
			want: "node is in a maintenance window until 2026-12-01T03:00:00Z"},
		{name: "malformed: no window", value: "next tuesday", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			n := node("n", tc.value)
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = tc.avoidWithin }), n)
			pod := st.MakePod().Name("p").Namespace("default").Obj()
			// Without a node that carries a value, PreFilter skips.
			_, status := pl.PreFilter(ctx, nil, pod, nil)
			if status.IsSkip() != (tc.value == "") || !status.IsSuccess() && !status.IsSkip() {
				t.Fatalf("PreFilter: %v, want skipped %v", status, tc.value == "")
			}
			checkFilter(ctx, t, pl, nil, pod, n, tc.want)
		})
	}
}

func TestFilterTimePasses(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, clk, _ := newPlugin(t, defaultArgs(nil))
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	ni := nodeInfo(node("n", interval(1, 2)))
	for _, step := range []struct {
		advance time.Duration
		blocked bool
	}{{0, false}, {time.Hour, true}, {59 * time.Minute, true}, {time.Minute, false}} {
		clk.Step(step.advance)
		if got := !pl.Filter(ctx, nil, pod, ni).IsSuccess(); got != step.blocked {
			t.Errorf("at %v: blocked %v, want %v", clk.Now().Format(time.RFC3339), got, step.blocked)
		}
	}
}

func TestMalformedIsLoggedOncePerNodeAndValue(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	_ = logger
	buffered := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx = klog.NewContext(ctx, buffered)
	pl, _, _ := newPlugin(t, defaultArgs(nil))
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	for _, n := range []*v1.Node{node("a", "soon"), node("a", "soon"), node("b", "soon"), node("a", "later"), node("a", "soon")} {
		if status := pl.Filter(ctx, nil, pod, nodeInfo(n)); !status.IsSuccess() {
			t.Fatalf("Filter(%s): %v: a malformed annotation must not block", n.Name, status)
		}
		pl.Score(ctx, nil, pod, nodeInfo(n))
	}
	var got []string
	for _, e := range buffered.GetSink().(ktesting.Underlier).GetBuffer().Data() {
		if e.Message == "Ignoring the node's maintenance windows" {
			kv := map[string]any{}
			for i := 0; i+1 < len(e.ParameterKVList); i += 2 {
				kv[e.ParameterKVList[i].(string)] = e.ParameterKVList[i+1]
			}
			got = append(got, kv["node"].(string)+"="+kv["value"].(string))
		}
	}
	if diff := cmp.Diff([]string{"a=soon", "b=soon", "a=later"}, got); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
}

func TestExemptPods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	args := defaultArgs(func(a *config.MaintenanceWindowArgs) {
		a.ExemptPodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kured"}}
	})
	openNode := node("n", interval(-1, 1))
	pl, _, _ := newPlugin(t, args, openNode)
	open := nodeInfo(openNode)
	tests := []struct {
		name   string
		pod    *v1.Pod
		exempt bool
	}{
		{name: "plain pod", pod: st.MakePod().Name("p").Obj(), exempt: false},
		{name: "DaemonSet pod", pod: st.MakePod().Name("p").OwnerReference("ds", daemonSetKind).Obj(), exempt: true},
		{name: "selected by exemptPodSelector", pod: st.MakePod().Name("p").Label("app", "kured").Obj(), exempt: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, status := pl.PreFilter(ctx, nil, tc.pod, nil)
			if status.IsSkip() != tc.exempt {
				t.Errorf("PreFilter: %v, want skipped %v", status, tc.exempt)
			}
			if pl.PreScore(ctx, nil, tc.pod, nil).IsSkip() != tc.exempt {
				t.Errorf("PreScore skipped: want %v", tc.exempt)
			}
			if got := pl.Filter(ctx, nil, tc.pod, open).IsSuccess(); got != tc.exempt {
				t.Errorf("Filter on a node in a window passes: %v, want %v", got, tc.exempt)
			}
			fragments, _ := pl.SignPod(ctx, tc.pod)
			want := []fwk.SignFragment{{Key: signatureKey, Value: tc.exempt},
				{Key: runtimeSignatureKey, Value: int64(-1)}, {Key: groupSignatureKey, Value: ""}}
			if diff := cmp.Diff(want, fragments); diff != "" {
				t.Errorf("SignPod (-want +got):\n%s", diff)
			}
		})
	}
	withoutDS := defaultArgs(func(a *config.MaintenanceWindowArgs) { a.IgnoreDaemonSetPods = false })
	pl2, _, _ := newPlugin(t, withoutDS)
	if pl2.Filter(ctx, nil, st.MakePod().Name("p").OwnerReference("ds", daemonSetKind).Obj(), open).IsSuccess() {
		t.Errorf("with ignoreDaemonSetPods false, a DaemonSet pod passed a node in a window")
	}
}

func TestScore(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, _, _ := newPlugin(t, defaultArgs(nil))
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	nodes := []*v1.Node{
		node("none", ""),
		node("past", interval(-3, -2)),
		node("in-12h", interval(12, 13)),
		node("in-6h", interval(6, 7)+","+interval(30, 31)),
		node("in-30h", interval(30, 31)),
		node("open", interval(-1, 1)),
		node("malformed", "soon"),
	}
	var scores fwk.NodeScoreList
	var raw []int64
	for _, n := range nodes {
		s, status := pl.Score(ctx, nil, pod, nodeInfo(n))
		if !status.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Name, status)
		}
		raw = append(raw, s)
		scores = append(scores, fwk.NodeScore{Name: n.Name, Score: s})
	}
	h := int64(24 * 3600)
	if diff := cmp.Diff([]int64{h, h, 12 * 3600, 6 * 3600, h, 0, h}, raw); diff != "" {
		t.Errorf("raw scores (-want +got):\n%s", diff)
	}
	pl.NormalizeScore(ctx, nil, pod, scores)
	var got []int64
	for _, s := range scores {
		got = append(got, s.Score)
	}
	if diff := cmp.Diff([]int64{100, 100, 50, 25, 100, 0, 100}, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}

	off, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.Horizon.Duration = 0 }))
	if !off.PreScore(ctx, nil, pod, nil).IsSkip() {
		t.Errorf("horizon 0: PreScore does not skip")
	}
}

func TestQueueingHint(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl, _, _ := newPlugin(t, defaultArgs(nil))
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	tests := []struct {
		name     string
		old, new *v1.Node
		want     fwk.QueueingHint
	}{
		{name: "node added without window", new: node("n", ""), want: fwk.Queue},
		{name: "node added in a window", new: node("n", interval(-1, 1)), want: fwk.QueueSkip},
		{name: "window removed", old: node("n", interval(-1, 1)), new: node("n", ""), want: fwk.Queue},
		{name: "window moved later", old: node("n", interval(-1, 1)), new: node("n", interval(5, 6)), want: fwk.Queue},
		{name: "window extended", old: node("n", interval(-1, 1)), new: node("n", interval(-1, 3)), want: fwk.QueueSkip},
		{name: "unrelated annotation change", old: node("n", interval(5, 6)), new: node("n", interval(7, 8)), want: fwk.QueueSkip},
		{name: "window made malformed", old: node("n", interval(-1, 1)), new: node("n", "soon"), want: fwk.Queue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old interface{}
			if tc.old != nil {
				old = tc.old
			}
			got, err := pl.isSchedulableAfterNodeChange(logger, pod, old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// waitFor polls cond for up to 10 seconds: the retries and the informer run
// on goroutines of their own.
func waitFor(cond func() bool) error {
	for range 10000 {
		if cond() {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return context.DeadlineExceeded
}

func TestNoWindowPathDoesNotAllocate(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	far := "2099-01-01T00:00:00Z/2099-01-01T04:00:00Z"
	tests := []struct {
		name string
		node *v1.Node
	}{
		{name: "no window", node: node("n", "")},
		{name: "annotation far ahead", node: node("n", far)},
		{name: "GKE label far ahead", node: gkeNode("n", "4070908800", "")},
		{name: "malformed GKE label", node: gkeNode("n", "soon", "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, _, _ := newPlugin(t, defaultArgs(nil))
			pod := st.MakePod().Name("p").Namespace("default").Obj()
			ni := nodeInfo(tc.node)
			pl.Filter(ctx, nil, pod, ni) // parse and log once
			allocs := testing.AllocsPerRun(100, func() {
				pl.PreFilter(ctx, nil, pod, nil)
				if !pl.Filter(ctx, nil, pod, ni).IsSuccess() {
					t.Fatal("Filter rejected a node without a window near")
				}
				pl.Score(ctx, nil, pod, ni)
			})
			if allocs != 0 {
				t.Errorf("PreFilter+Filter+Score for a pod of unknown runtime: %v allocs, want 0", allocs)
			}
		})
	}
}

// checkFilter runs Filter for pod on node and checks its rejection message,
// want ("" for admitted): a rejection must be UnschedulableAndUnresolvable,
// since no preemption can end a window.
func checkFilter(ctx context.Context, t *testing.T, pl *MaintenanceWindow, state fwk.CycleState, pod *v1.Pod, node *v1.Node, want string) {
	t.Helper()
	status := pl.Filter(ctx, state, pod, nodeInfo(node))
	got := ""
	if !status.IsSuccess() {
		if status.Code() != fwk.UnschedulableAndUnresolvable {
			t.Fatalf("Filter: got %v, want UnschedulableAndUnresolvable", status)
		}
		got = status.Message()
	}
	if got != want {
		t.Errorf("Filter: got %q, want %q", got, want)
	}
}
