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
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
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

// newTestPlugin builds the plugin over a fake API server holding objs and
// waits until its count cache has seen them.
func newTestPlugin(ctx context.Context, t *testing.T, args *config.NodeLessPodsArgs, objs ...runtime.Object) (*NodeLessPods, *clientsetfake.Clientset) {
	t.Helper()
	cs := clientsetfake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(cs, 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatalf("NewFramework: %v", err)
	}
	p, err := New(ctx, args, fh)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	informerCtx, stop := context.WithCancel(ctx)
	factory.Start(informerCtx.Done())
	// Informers stop only once their context ends: cancel before Shutdown.
	t.Cleanup(func() { stop(); factory.Shutdown() })
	factory.WaitForCacheSync(ctx.Done())
	pl := p.(*NodeLessPods)
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return pl.hasSynced(), nil
	}); err != nil {
		t.Fatalf("count cache did not sync: %v", err)
	}
	return pl, cs
}

// scoreAll runs Score on every node and NormalizeScore on the result, as the
// framework does, and returns the final score per node.
func scoreAll(ctx context.Context, t *testing.T, pl *NodeLessPods, nodes []*v1.Node, snapshotPods ...*v1.Pod) map[string]int64 {
	t.Helper()
	var scores fwk.NodeScoreList
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		for _, p := range snapshotPods {
			if p.Spec.NodeName == n.Name {
				ni.AddPod(p)
			}
		}
		ni.SetNode(n)
		s, st := pl.Score(ctx, nil, &v1.Pod{}, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Name, st)
		}
		scores = append(scores, fwk.NodeScore{Name: n.Name, Score: s})
	}
	if st := pl.NormalizeScore(ctx, nil, &v1.Pod{}, scores); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	got := make(map[string]int64, len(scores))
	for _, s := range scores {
		if s.Score < fwk.MinScore || s.Score > fwk.MaxScore {
			t.Errorf("score of %s is %d, outside [%d, %d]", s.Name, s.Score, fwk.MinScore, fwk.MaxScore)
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
			args:  func(a *config.NodeLessPodsArgs) { a.Mode = config.MostPods },
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Obj(), boundPod("b", "default", "n1").Obj(),
				boundPod("c", "default", "n2").Obj(),
			},
			want: map[string]int64{"n1": 100, "n2": 50, "n3": 0},
		},
		{
			name:  "pending and terminal pods do not count",
			nodes: threeNodes,
			pods: []*v1.Pod{
				boundPod("a", "default", "n1").Obj(),
				st.MakePod().Name("pending").Namespace("default").UID("pending").Obj(),
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
			args:  func(a *config.NodeLessPodsArgs) { a.RelativeToCapacity = true; a.Mode = config.MostPods },
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
			var objs []runtime.Object
			for _, n := range tc.nodes {
				objs = append(objs, n)
			}
			for _, p := range tc.pods {
				objs = append(objs, p)
			}
			pl, _ := newTestPlugin(ctx, t, testArgs(tc.args), objs...)
			// The snapshot is left empty: the counts must come from the cache.
			got := scoreAll(ctx, t, pl, tc.nodes)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScoreBeforeSync checks that, until the informer has delivered its
// initial list, Score counts the snapshot's pods with the same rules.
func TestScoreBeforeSync(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	factory := informers.NewSharedInformerFactory(clientsetfake.NewClientset(), 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, testArgs(func(a *config.NodeLessPodsArgs) { a.Namespaces = []string{"default"} }), fh)
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*NodeLessPods) // the factory is never started: the cache never syncs
	nodes := []*v1.Node{node("n1", 110), node("n2", 110)}
	snapshot := []*v1.Pod{
		boundPod("a", "default", "n1").Obj(),
		boundPod("b", "default", "n2").Obj(), boundPod("c", "default", "n2").Obj(),
		boundPod("other-ns", "kube-system", "n1").Obj(), boundPod("other-ns-2", "kube-system", "n1").Obj(),
		boundPod("done", "default", "n1").Phase(v1.PodSucceeded).Obj(),
		boundPod("ds", "default", "n1").OwnerReference("ds", daemonSetKind).Obj(),
	}
	got := scoreAll(ctx, t, pl, nodes, snapshot...)
	if diff := cmp.Diff(map[string]int64{"n1": 100, "n2": 0}, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

// TestReserveUnreserve checks that reservations move the scores at once and
// that the informer confirming a reserved pod does not count it twice.
func TestReserveUnreserve(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	nodes := []*v1.Node{node("n1", 110), node("n2", 110)}
	pl, cs := newTestPlugin(ctx, t, testArgs(func(a *config.NodeLessPodsArgs) { a.Namespaces = []string{"default"} }),
		nodes[0], nodes[1])
	check := func(step string, want map[string]int64) {
		t.Helper()
		if diff := cmp.Diff(want, scoreAll(ctx, t, pl, nodes)); diff != "" {
			t.Errorf("%s: scores (-want +got):\n%s", step, diff)
		}
	}
	pod := st.MakePod().Name("p").Namespace("default").UID("p").Obj()
	if st := pl.Reserve(ctx, nil, pod, "n1"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	check("after Reserve on n1", map[string]int64{"n1": 0, "n2": 100})

	pl.Unreserve(ctx, nil, pod, "n1")
	check("after Unreserve", map[string]int64{"n1": 100, "n2": 100})
	pl.Unreserve(ctx, nil, pod, "n1")
	check("after a second Unreserve", map[string]int64{"n1": 100, "n2": 100})

	// A pod the args do not count is not reserved.
	other := st.MakePod().Name("q").Namespace("elsewhere").UID("q").Obj()
	pl.Reserve(ctx, nil, other, "n2")
	check("after Reserve of a pod that does not count", map[string]int64{"n1": 100, "n2": 100})

	// Reserve on n2, then the API server reports the binding: one pod, not two.
	pl.Reserve(ctx, nil, pod, "n2")
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "n2"
	bound.Status.Phase = v1.PodRunning
	if _, err := cs.CoreV1().Pods("default").Create(ctx, bound, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCount(ctx, t, pl, "n2", 1)
	check("after the informer confirms the binding", map[string]int64{"n1": 100, "n2": 0})
	if got := pl.counts.Len(); got != 1 {
		t.Errorf("cache holds %d pods, want 1", got)
	}

	// Deleting the pod removes it.
	if err := cs.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCount(ctx, t, pl, "n2", 0)
	check("after the pod is deleted", map[string]int64{"n1": 100, "n2": 100})
}

// TestNodeDeletion checks that the pods of a deleted node stop counting.
func TestNodeDeletion(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, cs := newTestPlugin(ctx, t, testArgs(nil), node("n1", 110), boundPod("a", "default", "n1").Obj())
	pl.Reserve(ctx, nil, st.MakePod().Name("b").Namespace("default").UID("b").Obj(), "n1")
	if got := pl.counts.Count("n1"); got != 2 {
		t.Fatalf("n1 counts %d pods, want 2", got)
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForCount(ctx, t, pl, "n1", 0)
}

func waitForCount(ctx context.Context, t *testing.T, pl *NodeLessPods, nodeName string, want int) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return pl.counts.Count(nodeName) == want, nil
	}); err != nil {
		t.Fatalf("node %s counts %d pods, want %d", nodeName, pl.counts.Count(nodeName), want)
	}
}

func TestNewErrors(t *testing.T) {
	factory := informers.NewSharedInformerFactory(clientsetfake.NewClientset(), 0)
	tests := []struct {
		name    string
		obj     runtime.Object
		wantErr string
	}{
		{
			name:    "args of another plugin",
			obj:     &metav1.Status{},
			wantErr: "want args of type NodeLessPodsArgs",
		},
		{
			name:    "unknown mode",
			obj:     testArgs(func(a *config.NodeLessPodsArgs) { a.Mode = "Fewest" }),
			wantErr: `invalid NodeLessPods args: mode: Unsupported value: "Fewest": supported values: "LeastPods", "MostPods"`,
		},
		{
			name: "duplicate namespace",
			obj: testArgs(func(a *config.NodeLessPodsArgs) {
				a.Namespaces = []string{"a", "a"}
			}),
			wantErr: `namespaces[1]: Duplicate value: "a"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(factory))
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
	pl, _ := newTestPlugin(ctx, t, nil)
	if pl.mode != config.LeastPods || pl.relative || !pl.selector.ignoreDaemonSet || pl.selector.labels != nil || len(pl.selector.namespaces) != 0 {
		t.Errorf("plugin built from nil args: mode=%q relative=%v ignoreDaemonSet=%v selector=%v namespaces=%v; want the defaults",
			pl.mode, pl.relative, pl.selector.ignoreDaemonSet, pl.selector.labels, pl.selector.namespaces)
	}
}

func TestSignPodAndEvents(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, _ := newTestPlugin(ctx, t, nil)
	fragments, status := pl.SignPod(ctx, st.MakePod().Name("p").Obj())
	if !status.IsSuccess() || len(fragments) != 0 {
		t.Errorf("SignPod() = %v, %v; want no fragments and success", fragments, status)
	}
	events, err := pl.EventsToRegister(ctx)
	if err != nil || len(events) != 0 {
		t.Errorf("EventsToRegister() = %v, %v; want no events", events, err)
	}
}
