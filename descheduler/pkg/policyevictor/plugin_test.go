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

package policyevictor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworkfake "sigs.k8s.io/descheduler/pkg/framework/fake"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
	"sigs.k8s.io/descheduler/test"
)

// fakeRules stands in for a pod's PlacementPolicy rules: a Require rule
// for region, and a Prefer rule of weight for zone.
type fakeRules struct {
	region, zone string
	weight       int64
}

func (r fakeRules) Admits(n *v1.Node) (bool, string) {
	if r.region != "" && n.Labels["region"] != r.region {
		return false, "region"
	}
	return true, ""
}

func (r fakeRules) Preference(n *v1.Node) int64 {
	if r.zone != "" && n.Labels["zone"] == r.zone {
		return r.weight
	}
	return 0
}

// fakePlacement gives the rules of each pod by name.
type fakePlacement map[string]fakeRules

func (f fakePlacement) forPod(pod *v1.Pod) (ruleSet, bool, bool, error) {
	r, ok := f[pod.Name]
	if !ok {
		return nil, false, false, nil
	}
	return r, r.region != "", r.zone != "", nil
}

// fakeWindows blocks the nodes labelled window=open for pods without the
// label exempt=true.
type fakeWindows struct{ blocksCalls *atomic.Int32 }

func (w fakeWindows) exempt(pod *v1.Pod) bool    { return pod.Labels["exempt"] == "true" }
func (w fakeWindows) carries(node *v1.Node) bool { return node.Labels["window"] != "" }
func (w fakeWindows) blocks(_ klog.Logger, pod *v1.Pod, node *v1.Node, _ time.Time) (bool, string) {
	w.blocksCalls.Add(1)
	return !w.exempt(pod) && node.Labels["window"] == "open", "in a window"
}

func node(name string, pods int64, labels map[string]string) *v1.Node {
	return test.BuildTestNode(name, 4000, 8<<30, pods, func(n *v1.Node) { n.Labels = labels })
}

func pod(name, nodeName string, cpu int64, labels map[string]string) *v1.Pod {
	return test.BuildTestPod(name, cpu, 0, nodeName, func(p *v1.Pod) {
		p.Labels = labels
		test.SetNormalOwnerRef(p)
	})
}

// fixture is an evictor on a fake cluster, with the fakes' call counts.
type fixture struct {
	e           *PolicyEvictor
	podLists    *atomic.Int32
	blocksCalls *atomic.Int32
}

func newFixture(t *testing.T, args *PolicyEvictorArgs, pl placement, withWindows bool, objs ...runtime.Object) fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	getPods, err := podutil.BuildGetPodsAssignedToNodeFunc(factory.Core().V1().Pods().Informer())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{podLists: &atomic.Int32{}, blocksCalls: &atomic.Int32{}}
	counted := func(node string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
		f.podLists.Add(1)
		return getPods(node, filter)
	}
	handle := &frameworkfake.HandleImpl{ClientsetImpl: client, SharedInformerFactoryImpl: factory,
		GetPodsAssignedToNodeFuncImpl: counted}
	Default(args)
	f.e = newEvictor(ctx, args, handle, "test")
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	f.e.placement = pl
	if withWindows {
		f.e.windows = fakeWindows{f.blocksCalls}
	}
	return f
}

var _ frameworktypes.EvictorPlugin = &PolicyEvictor{}

func refusedCount(t *testing.T, reason string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(refused.WithLabelValues(reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// expect checks PreEvictionFilter's answer and, for a refusal, that it
// counted reason.
func expect(t *testing.T, e *PolicyEvictor, p *v1.Pod, want bool, reason string) {
	t.Helper()
	before := refusedCount(t, reason)
	if got := e.PreEvictionFilter(p); got != want {
		t.Fatalf("PreEvictionFilter(%s) = %v, want %v", p.Name, got, want)
	}
	if !want && refusedCount(t, reason) != before+1 {
		t.Fatalf("refused_total{reason=%q} did not count the refusal of %s", reason, p.Name)
	}
}

var eu = map[string]string{"region": "eu"}

func TestOnlyTheCurrentNodeFits(t *testing.T) {
	p := pod("p", "n1", 1000, nil)
	f := newFixture(t, &PolicyEvictorArgs{}, fakePlacement{"p": {region: "eu"}}, false,
		node("n1", 10, eu), node("n2", 10, eu), p,
		// n2 is full: it holds 4 of its 4 CPUs.
		pod("big", "n2", 4000, nil))
	expect(t, f.e, p, false, reasonNodeFit)
}

func TestOtherNodeFitsButNotTheRequireRule(t *testing.T) {
	p := pod("p", "n1", 1000, nil)
	pl := fakePlacement{"p": {region: "eu"}}
	f := newFixture(t, &PolicyEvictorArgs{}, pl, false,
		node("n1", 10, eu), node("us", 10, map[string]string{"region": "us"}), p)
	expect(t, f.e, p, false, reasonPlacementPolicy)
	if f.e.Filter(p) {
		t.Fatal("Filter let through a pod that no other node admits")
	}
	// The same pod with another EU node goes.
	f = newFixture(t, &PolicyEvictorArgs{}, pl, false,
		node("n1", 10, eu), node("us", 10, map[string]string{"region": "us"}), node("n2", 10, eu), p)
	if !f.e.Filter(p) {
		t.Fatal("Filter refused a pod that another node admits")
	}
	expect(t, f.e, p, true, "")
}

func TestOtherNodeInAWindow(t *testing.T) {
	p := pod("p", "n1", 1000, nil)
	f := newFixture(t, &PolicyEvictorArgs{}, nil, true,
		node("n1", 10, nil), node("n2", 10, map[string]string{"window": "open"}), p)
	expect(t, f.e, p, false, reasonWindow)
	// An exempt pod goes there.
	exempt := pod("exempt", "n1", 1000, map[string]string{"exempt": "true"})
	f = newFixture(t, &PolicyEvictorArgs{}, nil, true,
		node("n1", 10, nil), node("n2", 10, map[string]string{"window": "open"}), exempt)
	if !f.e.Filter(exempt) {
		t.Fatal("Filter refused an exempt pod")
	}
	expect(t, f.e, exempt, true, "")
}

func TestTwoPodsOneFreeSlot(t *testing.T) {
	p1, p2 := pod("p1", "n1", 100, nil), pod("p2", "n1", 100, nil)
	pl := fakePlacement{"p1": {region: "eu"}, "p2": {region: "eu"}}
	f := newFixture(t, &PolicyEvictorArgs{}, pl, false,
		// n2 takes 2 pods and holds 1: one free slot.
		node("n1", 10, eu), node("n2", 2, eu), pod("there", "n2", 100, nil), p1, p2)
	expect(t, f.e, p1, true, "")
	expect(t, f.e, p1, true, "") // p1 again: it holds its slot once
	expect(t, f.e, p2, false, reasonNodeFit)
	// Once admittedTTL has passed the slot counts as free again.
	later := time.Now().Add(DefaultAdmittedTTL)
	f.e.now = func() time.Time { return later }
	expect(t, f.e, p2, true, "")
}

func TestPodWithoutPolicyCostsNothing(t *testing.T) {
	free := pod("free", "n1", 1000, nil)
	exempt := pod("exempt", "n1", 1000, map[string]string{"exempt": "true"})
	tests := []struct {
		name    string
		windows bool
		pod     *v1.Pod
		nodes   []runtime.Object
	}{
		{name: "no rule selects it, no windows run", pod: free,
			nodes: []runtime.Object{node("n1", 10, nil), node("n2", 10, map[string]string{"window": "open"})}},
		{name: "exempt from windows", windows: true, pod: exempt,
			nodes: []runtime.Object{node("n1", 10, nil), node("n2", 10, map[string]string{"window": "open"})}},
		{name: "no node announces a window", windows: true, pod: free,
			nodes: []runtime.Object{node("n1", 10, nil), node("n2", 10, nil)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &PolicyEvictorArgs{}, fakePlacement{"other": {region: "eu"}}, tc.windows,
				append(tc.nodes, tc.pod)...)
			if !f.e.Filter(tc.pod) || !f.e.PreEvictionFilter(tc.pod) {
				t.Fatalf("pod %s, held by no policy, was refused", tc.pod.Name)
			}
			if n := f.podLists.Load() + f.blocksCalls.Load(); n != 0 {
				t.Fatalf("a pod held by no policy cost %d pod lists or window checks, want 0", n)
			}
		})
	}
}

func TestPreferred(t *testing.T) {
	p := pod("p", "n1", 1000, nil)
	pl := fakePlacement{"p": {zone: "a", weight: 50}}
	nodes := func() []runtime.Object {
		return []runtime.Object{node("n1", 10, map[string]string{"zone": "a"}), node("n2", 10, map[string]string{"zone": "b"}), p}
	}
	f := newFixture(t, &PolicyEvictorArgs{Preferred: PreferredRespect}, pl, false, nodes()...)
	expect(t, f.e, p, false, reasonLessPreferred)
	f = newFixture(t, &PolicyEvictorArgs{Preferred: PreferredIgnore}, pl, false, nodes()...)
	expect(t, f.e, p, true, "")
	if f.podLists.Load() != 0 {
		t.Fatal("with preferred: Ignore a pod held by Prefer rules only paid for the search")
	}
	// With Ignore, Prefer rules do not hold back a pod that a Require rule
	// makes subject.
	both := fakePlacement{"p": {region: "eu", zone: "a", weight: 50}}
	euNodes := func() []runtime.Object {
		return []runtime.Object{node("n1", 10, map[string]string{"region": "eu", "zone": "a"}),
			node("n2", 10, map[string]string{"region": "eu", "zone": "b"}), p}
	}
	f = newFixture(t, &PolicyEvictorArgs{Preferred: PreferredIgnore}, both, false, euNodes()...)
	expect(t, f.e, p, true, "")
	f = newFixture(t, &PolicyEvictorArgs{Preferred: PreferredRespect}, both, false, euNodes()...)
	expect(t, f.e, p, false, reasonLessPreferred)
	// An equally preferred node is a target.
	f = newFixture(t, &PolicyEvictorArgs{Preferred: PreferredRespect}, pl, false,
		node("n1", 10, map[string]string{"zone": "a"}), node("n2", 10, map[string]string{"zone": "b"}),
		node("n3", 10, map[string]string{"zone": "a"}), p)
	expect(t, f.e, p, true, "")
	if a := f.e.ledger.podsOn("n3", "", time.Now()); len(a) != 1 {
		t.Fatalf("the ledger holds %d pods for n3, the preferred target, want 1", len(a))
	}
}

func TestNodeSelectorLimitsTargets(t *testing.T) {
	p := pod("p", "n1", 1000, nil)
	f := newFixture(t, &PolicyEvictorArgs{NodeSelector: "pool=general"}, fakePlacement{"p": {region: "eu"}}, false,
		node("n1", 10, map[string]string{"region": "eu", "pool": "general"}), node("n2", 10, eu), p)
	expect(t, f.e, p, false, reasonNoOtherNode)
}

// TestReasonIsTheFurthestCheck: a refusal names the check the best other
// node failed: here n3 passes the window but not NodeFit.
func TestReasonIsTheFurthestCheck(t *testing.T) {
	p := pod("p", "n1", 1000, nil)
	f := newFixture(t, &PolicyEvictorArgs{}, nil, true,
		node("n1", 10, nil), node("n2", 10, map[string]string{"window": "open"}), node("n3", 10, nil), p,
		pod("big", "n3", 4000, nil))
	expect(t, f.e, p, false, reasonNodeFit)
}
