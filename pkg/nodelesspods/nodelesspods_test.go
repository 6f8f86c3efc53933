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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
)

var daemonSetKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}

// testArgs returns the defaulted args with mutate applied.
func testArgs(mutate func(*config.NodeLessPodsArgs)) *config.NodeLessPodsArgs {
	args := defaultArgs()
	if mutate != nil {
		mutate(args)
	}
	return args
}

// node returns a node that allows pods pods.
func node(name string, pods int) *v1.Node {
	return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourcePods: fmt.Sprint(pods)}).Obj()
}

// boundPod returns a running pod in namespace ns bound to nodeName.
func boundPod(name, ns, nodeName string) *st.PodWrapper {
	return st.MakePod().Name(name).Namespace(ns).UID(ns + "/" + name).Node(nodeName).Phase(v1.PodRunning)
}

// newTestPlugin builds the plugin on a framework whose snapshot holds nodes
// and the bound ones of pods, as the scheduler's snapshot does.
func newTestPlugin(ctx context.Context, t *testing.T, args *config.NodeLessPodsArgs, nodes []*v1.Node, pods ...*v1.Pod) (*NodeLessPods, *cache.Snapshot) {
	t.Helper()
	var bound []*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	snapshot := cache.NewSnapshot(bound, nodes)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		t.Fatalf("NewFramework: %v", err)
	}
	p, err := New(ctx, args, fh)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodeLessPods), snapshot
}

// scoreAll runs Score on every node of the snapshot and NormalizeScore on the
// result, as the framework does, and returns the final score per node.
func scoreAll(ctx context.Context, t *testing.T, pl *NodeLessPods, snapshot *cache.Snapshot) map[string]int64 {
	t.Helper()
	nodeInfos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	var scores fwk.NodeScoreList
	for _, ni := range nodeInfos {
		s, st := pl.Score(ctx, nil, &v1.Pod{}, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st)
		}
		scores = append(scores, fwk.NodeScore{Name: ni.Node().Name, Score: s})
	}
	if st := pl.NormalizeScore(ctx, nil, &v1.Pod{}, scores); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	got := make(map[string]int64, len(scores))
	for _, s := range scores {
		if s.Score < fwk.MinNodeScore || s.Score > fwk.MaxNodeScore {
			t.Errorf("score of %s is %d, outside [%d, %d]", s.Name, s.Score, fwk.MinNodeScore, fwk.MaxNodeScore)
		}
		got[s.Name] = s.Score
	}
	return got
}

func TestScore(t *testing.T) {
	threeNodes := []*v1.Node{node("n1", 110), node("n2", 110), node("n3", 110)}
	tests := []struct {
		name  string
		args  func(*config.NodeLessPodsArgs)
		nodes []*v1.Node
		pods  []*v1.Pod
		want  map[string]int64
	}{
		{
			name:  "empty cluster: every node ties",
			nodes: threeNodes,
			want:  map[string]int64{"n1": 100, "n2": 100, "n3": 100},
		},
		{
			name:  "least pods: the emptiest node wins",
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Obj(), boundPod("b", "default", "n1").Obj(),
				boundPod("c", "default", "n2").Obj(),
			},
			want: map[string]int64{"n1": 0, "n2": 50, "n3": 100},
		},
		{
			name:  "most pods: the fullest node wins",
			args:  func(a *config.NodeLessPodsArgs) { a.Mode = config.NodeLessPodsMostPods },
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Obj(), boundPod("b", "default", "n1").Obj(),
				boundPod("c", "default", "n2").Obj(),
			},
			want: map[string]int64{"n1": 100, "n2": 50, "n3": 0},
		},
		{
			name:  "terminal pods do not count",
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Obj(),
				boundPod("done", "default", "n2").Phase(v1.PodSucceeded).Obj(),
				boundPod("failed", "default", "n3").Phase(v1.PodFailed).Obj(),
			},
			want: map[string]int64{"n1": 0, "n2": 100, "n3": 100},
		},
		{
			name: "pod selector: only matching pods count",
			args: func(a *config.NodeLessPodsArgs) {
				a.PodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}}
			},
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Label("tier", "web").Obj(),
				boundPod("b", "default", "n1").Label("tier", "web").Obj(),
				boundPod("c", "default", "n2").Label("tier", "batch").Obj(),
			},
			want: map[string]int64{"n1": 100, "n2": 0, "n3": 100},
		},
		{
			name: "pod selector with expressions",
			args: func(a *config.NodeLessPodsArgs) {
				a.PodSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web"}},
				}}
			},
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Label("tier", "web").Obj(),
				boundPod("b", "default", "n2").Obj(),
				boundPod("c", "default", "n2").Label("tier", "db").Obj(),
			},
			want: map[string]int64{"n1": 100, "n2": 0, "n3": 100},
		},
		{
			name:  "namespaces: only pods in the listed namespaces count",
			args:  func(a *config.NodeLessPodsArgs) { a.Namespaces = []string{"team-a", "team-b"} },
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "kube-system", "n1").Obj(), boundPod("b", "kube-system", "n1").Obj(),
				boundPod("c", "team-a", "n2").Obj(), boundPod("d", "team-b", "n2").Obj(),
				boundPod("e", "team-b", "n3").Obj(),
			},
			want: map[string]int64{"n1": 100, "n2": 0, "n3": 50},
		},
		{
			name:  "DaemonSet pods are ignored by default",
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("ds-1", "kube-system", "n1").OwnerReference("ds", daemonSetKind).Obj(),
				boundPod("ds-2", "kube-system", "n2").OwnerReference("ds", daemonSetKind).Obj(),
				boundPod("a", "default", "n2").Obj(),
			},
			want: map[string]int64{"n1": 100, "n2": 0, "n3": 100},
		},
		{
			name:  "DaemonSet pods count when ignoreDaemonSetPods is false",
			args:  func(a *config.NodeLessPodsArgs) { a.IgnoreDaemonSetPods = false },
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("ds-1", "kube-system", "n1").OwnerReference("ds", daemonSetKind).Obj(),
				boundPod("ds-2", "kube-system", "n2").OwnerReference("ds", daemonSetKind).Obj(),
				boundPod("a", "default", "n2").Obj(),
			},
			want: map[string]int64{"n1": 50, "n2": 0, "n3": 100},
		},
		{
			name:  "pods owned by something else than a DaemonSet count",
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("rs-1", "default", "n1").OwnerReference("rs", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}).Obj(),
			},
			want: map[string]int64{"n1": 0, "n2": 100, "n3": 100},
		},
		{
			name:  "raw count ignores capacity",
			nodes: []*v1.Node{node("small", 10), node("big", 100)},
			pods: []*v1.Pod{
				boundPod("a", "default", "small").Obj(),
				boundPod("b", "default", "big").Obj(), boundPod("c", "default", "big").Obj(),
			},
			want: map[string]int64{"small": 100, "big": 0},
		},
		{
			name:  "relative to capacity: a big node with more pods is the lighter one",
			args:  func(a *config.NodeLessPodsArgs) { a.RelativeToCapacity = true },
			nodes: []*v1.Node{node("small", 10), node("big", 100), node("empty", 50)},
			pods: []*v1.Pod{
				boundPod("a", "default", "small").Obj(),                                      // 10% full
				boundPod("b", "default", "big").Obj(), boundPod("c", "default", "big").Obj(), // 2% full
			},
			want: map[string]int64{"small": 0, "big": 80, "empty": 100},
		},
		{
			name:  "relative to capacity: a node that allows no pods counts as full",
			args:  func(a *config.NodeLessPodsArgs) { a.RelativeToCapacity = true },
			nodes: []*v1.Node{node("zero", 0), node("half", 4)},
			pods: []*v1.Pod{
				boundPod("a", "default", "half").Obj(), boundPod("b", "default", "half").Obj(),
			},
			want: map[string]int64{"zero": 0, "half": 100},
		},
		{
			name:  "relative to capacity, most pods: the fullest share wins",
			args:  func(a *config.NodeLessPodsArgs) { a.RelativeToCapacity = true; a.Mode = config.NodeLessPodsMostPods },
			nodes: []*v1.Node{node("small", 10), node("big", 100)},
			pods: []*v1.Pod{
				boundPod("a", "default", "small").Obj(),
				boundPod("b", "default", "big").Obj(), boundPod("c", "default", "big").Obj(),
			},
			want: map[string]int64{"small": 100, "big": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, snapshot := newTestPlugin(ctx, t, testArgs(tc.args), tc.nodes, tc.pods...)
			got := scoreAll(ctx, t, pl, snapshot)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			// A second cycle on the same snapshot reads the memos: same scores.
			if diff := cmp.Diff(tc.want, scoreAll(ctx, t, pl, snapshot)); diff != "" {
				t.Errorf("second cycle: scores (-want +got):\n%s", diff)
			}
		})
	}
}

// loadOf returns the raw score Score gives nodeInfo.
func loadOf(ctx context.Context, t *testing.T, pl *NodeLessPods, nodeInfo fwk.NodeInfo) int64 {
	t.Helper()
	s, status := pl.Score(ctx, nil, &v1.Pod{}, nodeInfo)
	if !status.IsSuccess() {
		t.Fatalf("Score: %v", status)
	}
	return s
}

// TestCountFollowsNodeInfo checks that the count is the NodeInfo's, through
// the changes the scheduler makes to it: new generations from its cache, and,
// in pod-group cycles, pods the snapshot assumes and forgets keeping the
// generation, with Reserve and Unreserve around them or, in a profile that
// enables the plugin at score only, without.
func TestCountFollowsNodeInfo(t *testing.T) {
	for _, withReserve := range []bool{true, false} {
		t.Run(fmt.Sprintf("reserve=%v", withReserve), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			logger := klog.FromContext(ctx)
			n1 := node("n1", 110)
			pl, _ := newTestPlugin(ctx, t, testArgs(nil), []*v1.Node{n1})
			ni := framework.NewNodeInfo(boundPod("a", "default", "n1").Obj(), boundPod("b", "default", "n1").Obj())
			ni.SetNode(n1)
			check := func(step string, want int64) {
				t.Helper()
				if got := loadOf(ctx, t, pl, ni); got != want {
					t.Errorf("%s: Score = %d, want %d", step, got, want)
				}
			}
			check("two bound pods", 2)
			check("two bound pods, memoized", 2)

			ni.AddPod(boundPod("c", "default", "n1").Obj()) // the cache's change: a new generation
			check("a third pod", 3)

			// Snapshot.AssumePod in a pod-group cycle: the pod joins, the
			// generation stays, then Reserve runs.
			assumed := boundPod("group-member", "default", "n1").Obj()
			generation := ni.Generation
			ni.AddPod(assumed)
			ni.Generation = generation
			if withReserve {
				if status := pl.Reserve(ctx, nil, assumed, "n1"); !status.IsSuccess() {
					t.Fatalf("Reserve: %v", status)
				}
			}
			check("a pod-group member assumed", 4)

			// The group fails: Unreserve, then Snapshot.ForgetPod keeping the
			// generation.
			if withReserve {
				pl.Unreserve(ctx, nil, assumed, "n1")
			}
			if err := ni.RemovePod(logger, assumed); err != nil {
				t.Fatal(err)
			}
			ni.Generation = generation
			check("the pod-group member forgotten", 3)
		})
	}
}

// a panic.
func TestScoreNodeGone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, _ := newTestPlugin(ctx, t, testArgs(nil), nil)
	if _, status := pl.Score(ctx, nil, &v1.Pod{}, framework.NewNodeInfo()); status.Code() != fwk.Error {
		t.Errorf("Score on a NodeInfo without node: status %v, want Error", status)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name     string
		obj      runtime.Object
		snapshot bool
		wantErr  string
	}{
		{
			name:    "no snapshot lister",
			obj:     testArgs(nil),
			wantErr: "NodeLessPods needs the scheduler's snapshot lister",
		},
		{
			name:     "args of another plugin",
			obj:      &metav1.Status{},
			snapshot: true,
			wantErr:  "want args of type NodeLessPodsArgs",
		},
		{
			name:     "unknown mode",
			obj:      testArgs(func(a *config.NodeLessPodsArgs) { a.Mode = "Fewest" }),
			snapshot: true,
			wantErr:  `invalid NodeLessPods args: mode: Unsupported value: "Fewest": supported values: "LeastPods", "MostPods"`,
		},
		{
			name: "duplicate namespace",
			obj: testArgs(func(a *config.NodeLessPodsArgs) {
				a.Namespaces = []string{"a", "a"}
			}),
			snapshot: true,
			wantErr:  `namespaces[1]: Duplicate value: "a"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var opts []frameworkruntime.Option
			if tc.snapshot {
				opts = append(opts, frameworkruntime.WithSnapshotSharedLister(cache.NewEmptySnapshot()))
			}
			fh, err := frameworkruntime.NewFramework(ctx, nil, nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(ctx, tc.obj, fh)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("New() error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewWithoutArgsUsesDefaults(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, _ := newTestPlugin(ctx, t, nil, nil)
	if pl.mode != config.NodeLessPodsLeastPods || pl.relative || !pl.selector.ignoreDaemonSet || pl.selector.labels != nil || len(pl.selector.namespaces) != 0 {
		t.Errorf("plugin built from nil args: mode=%q relative=%v ignoreDaemonSet=%v selector=%v namespaces=%v; want the defaults",
			pl.mode, pl.relative, pl.selector.ignoreDaemonSet, pl.selector.labels, pl.selector.namespaces)
	}
}

func TestSignPodAndEvents(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, _ := newTestPlugin(ctx, t, nil, nil)
	fragments, status := pl.SignPod(ctx, st.MakePod().Name("p").Obj())
	if !status.IsSuccess() || len(fragments) != 0 {
		t.Errorf("SignPod() = %v, %v; want no fragments and success", fragments, status)
	}
	events, err := pl.EventsToRegister(ctx)
	if err != nil || len(events) != 0 {
		t.Errorf("EventsToRegister() = %v, %v; want no events", events, err)
	}
}

// defaultArgs returns the args of a profile without a pluginConfig entry.
func defaultArgs() *config.NodeLessPodsArgs {
	args, err := scheme.DefaultArgs(Name)
	if err != nil {
		panic(err)
	}
	return args.(*config.NodeLessPodsArgs)
}
