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

package nodepoolquota

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

const gpu v1.ResourceName = "nvidia.com/gpu"

// node is a node with labels given as key, value, ...
func node(name string, kv ...string) *v1.Node {
	n := st.MakeNode().Name(name).Obj()
	n.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// gpuPod is a pod of namespace ns asking for gpus GPUs at priority prio.
func gpuPod(name, ns string, gpus int64, prio int32) *v1.Pod {
	return st.MakePod().Name(name).Namespace(ns).UID(ns + "/" + name).Priority(prio).
		Res(map[v1.ResourceName]string{gpu: fmt.Sprint(gpus)}).Obj()
}

// teamQuota is a team of namespaces with limits given as resource, amount, ...
func teamQuota(name string, namespaces []string, limits ...string) v1alpha1.TeamQuota {
	t := v1alpha1.TeamQuota{Name: name, Namespaces: namespaces, Limits: v1.ResourceList{}}
	for i := 0; i+1 < len(limits); i += 2 {
		t.Limits[v1.ResourceName(limits[i])] = resource.MustParse(limits[i+1])
	}
	return t
}

// poolQuota is a NodePoolQuota named pool over the nodes labelled pool=pool.
func poolQuota(pool, rv string, teams ...v1alpha1.TeamQuota) *v1alpha1.NodePoolQuota {
	return &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: pool, ResourceVersion: rv},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
			Teams:        teams,
		},
	}
}

// h100 limits team-a (namespaces a-1, a-2) to gpus GPUs and team-b (b-1)
// to 2 in pool h100.
func h100(gpus string) *v1alpha1.NodePoolQuota {
	return poolQuota("h100", "1",
		teamQuota("team-a", []string{"a-1", "a-2"}, string(gpu), gpus),
		teamQuota("team-b", []string{"b-1"}, string(gpu), "2"))
}

// clusterNodes are four h100 nodes and two general ones.
func clusterNodes() []*v1.Node {
	return []*v1.Node{
		node("h1", "pool", "h100"), node("h2", "pool", "h100"), node("h3", "pool", "h100"), node("h4", "pool", "h100"),
		node("g1", "pool", "general"), node("g2", "pool", "general"),
	}
}

// namespaceLister lists the namespaces given.
func namespaceLister(t testing.TB, nss ...*v1.Namespace) corelisters.NamespaceLister {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, ns := range nss {
		if err := indexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewNamespaceLister(indexer)
}

func namespace(name string, kv ...string) *v1.Namespace {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		ns.Labels[kv[i]] = kv[i+1]
	}
	return ns
}

var profiles atomic.Int64

// uniqueProfile names each test's profile, so that metrics do not mix.
func uniqueProfile(t testing.TB) string {
	return fmt.Sprintf("%s#%d", t.Name(), profiles.Add(1))
}

// counting counts the framework's calls of Filter: the work a Skip from
// PreFilter must spare.
type counting struct {
	*NodePoolQuota
	filters atomic.Int64
}

func (c *counting) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	c.filters.Add(1)
	return c.NodePoolQuota.Filter(ctx, state, pod, ni)
}

// harness runs the plugin in a framework over the scheduler's real snapshot.
type harness struct {
	t    testing.TB
	ctx  context.Context
	f    framework.Framework
	pl   *counting
	snap *schedcache.Snapshot
}

func newHarness(t testing.TB, namespaces corelisters.NamespaceLister, quotas []*v1alpha1.NodePoolQuota, nodes []*v1.Node, pods ...*v1.Pod) *harness {
	t.Helper()
	schedmetrics.Register()
	registerMetrics()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, snap: schedcache.NewSnapshot(pods, nodes)}
	factory := func(ctx context.Context, _ runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
		pl := newPlugin(fh, namespaces)
		pl.setQuotas(ktesting.NewLogger(t, ktesting.NewConfig()), quotas)
		h.pl = &counting{NodePoolQuota: pl}
		return h.pl, nil
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(Name, factory, "PreFilter", "Filter"),
	}, uniqueProfile(t), frameworkruntime.WithSnapshotSharedLister(h.snap))
	if err != nil {
		t.Fatal(err)
	}
	h.f = f
	return h
}

// result is one cycle's outcome.
type result struct {
	skipped  bool
	feasible []string
	// statuses are the rejected nodes' statuses.
	statuses map[string]*fwk.Status
	state    fwk.CycleState
}

// cycle runs PreFilter and Filter on every node of the snapshot for pod.
func (h *harness) cycle(pod *v1.Pod) result {
	h.t.Helper()
	state := framework.NewCycleState()
	if _, s, _ := h.f.RunPreFilterPlugins(h.ctx, state, pod); !s.IsSuccess() {
		h.t.Fatalf("%s: PreFilter: %v", pod.Name, s)
	}
	r := result{skipped: state.GetSkipFilterPlugins().Has(Name), statuses: map[string]*fwk.Status{}, state: state}
	nodes, err := h.snap.NodeInfos().List()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, ni := range nodes {
		if s := h.f.RunFilterPlugins(h.ctx, state, pod, ni); s.IsSuccess() {
			r.feasible = append(r.feasible, ni.Node().Name)
		} else {
			r.statuses[ni.Node().Name] = s
		}
	}
	// The snapshot lists nodes in map order.
	slices.Sort(r.feasible)
	return r
}

// assume adds pod to the snapshot's node, as the scheduler's cache does
// when it assumes a pod: the next cycle's snapshot holds it.
func (h *harness) assume(pod *v1.Pod, nodeName string) {
	h.t.Helper()
	ni, err := h.snap.NodeInfos().Get(nodeName)
	if err != nil {
		h.t.Fatal(err)
	}
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		h.t.Fatal(err)
	}
	p := pi.GetPod().DeepCopy()
	p.Spec.NodeName = nodeName
	pi, err = framework.NewPodInfo(p)
	if err != nil {
		h.t.Fatal(err)
	}
	ni.AddPodInfo(pi)
}

// inPool keeps the names that start with h (the h100 nodes).
func inPool(names []string) []string {
	var out []string
	for _, n := range names {
		if n[0] == 'h' {
			out = append(out, n)
		}
	}
	return out
}

// TestBurst schedules 100 one-GPU pods of team-a against its quota of 10
// GPUs, each onto a feasible h100 node and assumed into the snapshot before
// the next cycle, as the scheduler does: exactly 10 fit the pool, the
// general nodes stay open to all, and team-b's quota is its own.
func TestBurst(t *testing.T) {
	h := newHarness(t, nil, []*v1alpha1.NodePoolQuota{h100("10")}, clusterNodes())
	placed := 0
	var lastStatus *fwk.Status
	for i := range 100 {
		pod := gpuPod(fmt.Sprintf("a-%d", i), []string{"a-1", "a-2"}[i%2], 1, 0)
		r := h.cycle(pod)
		if r.skipped {
			t.Fatalf("%s: PreFilter skipped a pod of team-a", pod.Name)
		}
		if diff := cmp.Diff([]string{"g1", "g2"}, without(r.feasible, inPool(r.feasible))); diff != "" {
			t.Fatalf("%s: general nodes feasible (-want +got):\n%s", pod.Name, diff)
		}
		if pool := inPool(r.feasible); len(pool) > 0 {
			h.assume(pod, pool[i%len(pool)])
			placed++
		} else {
			lastStatus = r.statuses["h1"]
		}
	}
	if placed != 10 {
		t.Errorf("%d pods of team-a placed in pool h100, want exactly 10", placed)
	}
	if lastStatus == nil || lastStatus.Code() != fwk.Unschedulable {
		t.Fatalf("status of h1 for the 100th pod: %v, want Unschedulable", lastStatus)
	}
	if want := "team team-a uses 10 of 10 nvidia.com/gpu in pool h100 and the pod asks for 1"; lastStatus.Message() != want {
		t.Errorf("message %q, want %q", lastStatus.Message(), want)
	}

	// team-b has its own 2 GPUs in the pool, however full team-a is.
	placedB := 0
	for i := range 5 {
		pod := gpuPod(fmt.Sprintf("b-%d", i), "b-1", 1, 0)
		if pool := inPool(h.cycle(pod).feasible); len(pool) > 0 {
			h.assume(pod, pool[0])
			placedB++
		}
	}
	if placedB != 2 {
		t.Errorf("%d pods of team-b placed in pool h100, want 2", placedB)
	}
	// A team-a pod that asks for no GPU counts against nothing.
	if r := h.cycle(st.MakePod().Name("a-cpu").Namespace("a-1").Res(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()); !r.skipped || len(r.feasible) != 6 {
		t.Errorf("a team-a pod without GPUs: skipped %v, %d nodes feasible; want skipped, 6", r.skipped, len(r.feasible))
	}
}

// without returns a minus the names in b.
func without(a, b []string) []string {
	var out []string
	for _, n := range a {
		found := false
		for _, m := range b {
			found = found || n == m
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// TestNoTeamSkips checks that a pod no quota counts is skipped at
// PreFilter, so that the framework never calls Filter for it.
func TestNoTeamSkips(t *testing.T) {
	h := newHarness(t, nil, []*v1alpha1.NodePoolQuota{h100("0")}, clusterNodes())
	for _, pod := range []*v1.Pod{
		gpuPod("other", "default", 1, 0),
		gpuPod("kube", "kube-system", 4, 0),
	} {
		r := h.cycle(pod)
		if !r.skipped || len(r.feasible) != 6 {
			t.Errorf("%s: skipped %v, %d nodes feasible; want skipped, 6", pod.Name, r.skipped, len(r.feasible))
		}
	}
	if n := h.pl.filters.Load(); n != 0 {
		t.Errorf("Filter called %d times for pods of no team, want 0", n)
	}
	// A pod of team-a is filtered on every node.
	if r := h.cycle(gpuPod("a", "a-1", 1, 0)); r.skipped || len(r.feasible) != 2 || h.pl.filters.Load() != 6 {
		t.Errorf("team-a pod: skipped %v, feasible %v, Filter calls %d; want not skipped, the 2 general nodes, 6", r.skipped, r.feasible, h.pl.filters.Load())
	}
}

// TestPreemptionFreesOnlyTheTeamsQuota fills team-a's quota of 2 GPUs on h1
// with low-priority team-a pods, next to team-b pods, and runs what
// preemption's dry run runs for a high-priority team-a pod: remove victims
// from a copy of the node and the cycle state, then Filter. Only removing
// a team-a pod makes room; removing team-b's pods, or a team-a pod of
// another pool, does not.
func TestPreemptionFreesOnlyTheTeamsQuota(t *testing.T) {
	lowA1, lowA2 := gpuPod("low-a1", "a-1", 1, 0), gpuPod("low-a2", "a-2", 1, 0)
	b1, b2 := gpuPod("b1", "b-1", 1, 0), gpuPod("b2", "b-1", 1, 0)
	elsewhere := gpuPod("a-elsewhere", "a-1", 1, 0)
	for _, p := range []*v1.Pod{lowA1, lowA2, b1, b2} {
		p.Spec.NodeName = "h1"
	}
	elsewhere.Spec.NodeName = "g1"
	h := newHarness(t, nil, []*v1alpha1.NodePoolQuota{h100("2")}, clusterNodes(), lowA1, lowA2, b1, b2, elsewhere)
	high := gpuPod("high", "a-1", 1, 1000)
	r := h.cycle(high)
	s := r.statuses["h1"]
	if s == nil || s.Code() != fwk.Unschedulable {
		t.Fatalf("h1 before preemption: %v, want Unschedulable (preemption may help)", s)
	}
	ni, err := h.snap.NodeInfos().Get("h1")
	if err != nil {
		t.Fatal(err)
	}
	g1, err := h.snap.NodeInfos().Get("g1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		victims []*v1.Pod
		from    fwk.NodeInfo
		fits    bool
	}{
		{name: "team-b's pods", victims: []*v1.Pod{b1, b2}, from: ni},
		{name: "team-a's pod outside the pool", victims: []*v1.Pod{elsewhere}, from: g1},
		{name: "one team-a pod", victims: []*v1.Pod{lowA1}, from: ni, fits: true},
		{name: "team-a and team-b pods", victims: []*v1.Pod{lowA2, b1}, from: ni, fits: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := r.state.Clone()
			copyNI := ni.Snapshot()
			logger, _ := ktesting.NewTestContext(t)
			for _, v := range tc.victims {
				pi, err := framework.NewPodInfo(v)
				if err != nil {
					t.Fatal(err)
				}
				from := tc.from
				if from == ni {
					from = copyNI
					if err := copyNI.RemovePod(logger, v); err != nil {
						t.Fatal(err)
					}
				}
				if s := h.f.RunPreFilterExtensionRemovePod(h.ctx, state, high, pi, from); !s.IsSuccess() {
					t.Fatalf("RemovePod: %v", s)
				}
			}
			s := h.f.RunFilterPlugins(h.ctx, state, high, copyNI)
			if s.IsSuccess() != tc.fits {
				t.Errorf("Filter after removing %s: %v, want fits=%v", tc.name, s, tc.fits)
			}
			// The dry run's state is a clone: the cycle's state is intact.
			if s := h.f.RunFilterPlugins(h.ctx, r.state, high, ni); s.IsSuccess() {
				t.Errorf("the cycle's own state changed with its clone's")
			}
		})
	}

	// AddPod, as for a nominated pod: a team-a pod added fills the room
	// that removing one made.
	state := r.state.Clone()
	pi, _ := framework.NewPodInfo(lowA1)
	if s := h.f.RunPreFilterExtensionRemovePod(h.ctx, state, high, pi, ni); !s.IsSuccess() {
		t.Fatal(s)
	}
	nominated, _ := framework.NewPodInfo(gpuPod("nominated", "a-2", 1, 2000))
	if s := h.f.RunPreFilterExtensionAddPod(h.ctx, state, high, nominated, ni); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := h.f.RunFilterPlugins(h.ctx, state, high, ni); s.Code() != fwk.Unschedulable {
		t.Errorf("after a team-a pod was removed and one nominated: %v, want Unschedulable", s)
	}
}

// TestNamespaceSelector selects team-a's namespaces by label: the pods of
// a labelled namespace count and are held, those of an unlabelled one not.
func TestNamespaceSelector(t *testing.T) {
	q := poolQuota("h100", "1", teamQuota("team-a", nil, string(gpu), "1"))
	q.Spec.Teams[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	running := gpuPod("running", "ml", 1, 0)
	running.Spec.NodeName = "h2"
	nss := namespaceLister(t, namespace("ml", "team", "a"), namespace("ml-2", "team", "a"), namespace("web", "team", "web"))
	h := newHarness(t, nss, []*v1alpha1.NodePoolQuota{q}, clusterNodes(), running)
	if r := h.cycle(gpuPod("p", "ml-2", 1, 0)); r.skipped || len(inPool(r.feasible)) != 0 {
		t.Errorf("a pod of a labelled namespace: skipped %v, feasible %v; want the pool full (ml's pod counts)", r.skipped, r.feasible)
	}
	if r := h.cycle(gpuPod("p", "web", 1, 0)); !r.skipped {
		t.Errorf("a pod of a namespace the selector does not select was not skipped")
	}
}

// TestCloneDeepCopies checks that a clone's usage is its own.
func TestCloneDeepCopies(t *testing.T) {
	s := &cycleState{pairs: []pair{{used: []int64{1, 2}, req: []int64{1, 1}}}}
	c := s.Clone().(*cycleState)
	c.pairs[0].used[0] = 9
	if s.pairs[0].used[0] != 1 {
		t.Errorf("changing a clone's usage changed the original's")
	}
}

// TestQuotasCachedByResourceVersion checks that setQuotas compiles a quota
// again only when its resourceVersion changes.
func TestQuotasCachedByResourceVersion(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(nil, nil)
	a, b := h100("10"), poolQuota("a100", "7", teamQuota("team-a", []string{"a-1"}, "cpu", "4"))
	pl.setQuotas(logger, []*v1alpha1.NodePoolQuota{a, b})
	first := pl.quotas.Load().list
	a2 := h100("12")
	a2.ResourceVersion = "2"
	pl.setQuotas(logger, []*v1alpha1.NodePoolQuota{b, a2})
	second := pl.quotas.Load().list
	if len(second) != 2 || second[0].q.Name != "a100" || second[1].q.Name != "h100" {
		t.Fatalf("quotas not sorted by name: %v", second)
	}
	if second[0] != first[0] {
		t.Errorf("a100, unchanged, was compiled again")
	}
	if second[1] == first[1] || second[1].q.Teams[0].Limits[0].Max != 12 {
		t.Errorf("h100 at a new resourceVersion was not compiled again")
	}
	bad := poolQuota("bad", "1", teamQuota("team-a", []string{"a-1"}, "cpu", "1"))
	bad.Spec.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "pool", Operator: "Near"}}
	pl.setQuotas(logger, []*v1alpha1.NodePoolQuota{a2, bad})
	if got := pl.quotas.Load().list; len(got) != 1 || got[0].q.Name != "h100" {
		t.Errorf("an invalid quota was kept: %d quotas", len(got))
	}
}

// TestPreFilterNoTeamAllocatesNothing shows that a pod of no team costs
// PreFilter no allocation, with quotas that select namespaces by label.
func TestPreFilterNoTeamAllocatesNothing(t *testing.T) {
	pl, state, pod := noTeamSetup(t)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if _, s := pl.PreFilter(ctx, state, pod, nil); s.Code() != fwk.Skip {
			t.Fatalf("PreFilter: %v, want Skip", s)
		}
	})
	if allocs != 0 {
		t.Errorf("PreFilter allocates %v times for a pod of no team, want 0", allocs)
	}
}

func noTeamSetup(t testing.TB) (*NodePoolQuota, fwk.CycleState, *v1.Pod) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(nil, namespaceLister(t, namespace("default"), namespace("ml", "team", "a")))
	var quotas []*v1alpha1.NodePoolQuota
	for i := range 10 {
		q := h100("64")
		q.Name = fmt.Sprintf("pool-%d", i)
		q.Spec.Teams[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
		quotas = append(quotas, q)
	}
	pl.setQuotas(logger, quotas)
	pod := gpuPod("p", "default", 1, 0)
	pod.UID = types.UID("p")
	return pl, framework.NewCycleState(), pod
}

func BenchmarkPreFilterNoTeam(b *testing.B) {
	pl, state, pod := noTeamSetup(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		pl.PreFilter(ctx, state, pod, nil)
	}
}

// TestUsageOfEveryKindOfLimit checks the usage PreFilter counts for cpu
// (millicores), memory (bytes), pods and an extended resource, from pods
// with init containers, and that pods of other teams and other pools do
// not count.
func TestUsageOfEveryKindOfLimit(t *testing.T) {
	q := poolQuota("h100", "1",
		teamQuota("team-a", []string{"a-1"}, "cpu", "100", "memory", "100Gi", "pods", "100", string(gpu), "100"),
		teamQuota("team-b", []string{"b-1"}, "cpu", "100"))
	res := map[v1.ResourceName]string{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi", gpu: "2"}
	withInit := st.MakePod().Name("init").Namespace("a-1").Node("h1").Res(res).
		InitReq(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Obj()
	plain := st.MakePod().Name("plain").Namespace("a-1").Node("h2").Res(res).Obj()
	otherTeam := st.MakePod().Name("b").Namespace("b-1").Node("h2").Res(res).Obj()
	otherPool := st.MakePod().Name("g").Namespace("a-1").Node("g1").Res(res).Obj()
	h := newHarness(t, nil, []*v1alpha1.NodePoolQuota{q}, clusterNodes(), withInit, plain, otherTeam, otherPool)
	r := h.cycle(gpuPod("p", "a-1", 1, 0))
	s, err := readState(r.state)
	if err != nil {
		t.Fatal(err)
	}
	// Limits sort by name: cpu, memory, nvidia.com/gpu, pods.
	want := []int64{3000 + 500, 2 << 30, 4, 2}
	if len(s.pairs) != 1 {
		t.Fatalf("%d pairs, want 1", len(s.pairs))
	}
	if diff := cmp.Diff(want, s.pairs[0].used); diff != "" {
		t.Errorf("team-a's usage (-want +got):\n%s", diff)
	}
}
