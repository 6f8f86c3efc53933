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

// Tests that kill the mutants a gremlins run left alive (issue 18, item 5;
// doc/mutation-testing.md): each names the mutant it guards against.

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestEventsActionTypes guards events.go:39 (fwk.Add | fwk.UpdateNodeLabel
// mutated to &): the node event must cover both node additions and node
// label updates, or a pod waiting for a matching node is never retried.
func TestEventsActionTypes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	events, err := newPlugin(t, testArgs(nil)).EventsToRegister(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []fwk.ClusterEvent
	for _, e := range events {
		got = append(got, e.Event)
	}
	want := []fwk.ClusterEvent{
		{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel},
		{Resource: ownPodResource, ActionType: fwk.UpdatePodLabel},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestQueueingHintsOddObjects guards the type checks of the hints:
// events.go:64 (isNode && oldNode != nil mutated to ||: a typed nil old node
// would be read) and events.go:81 (!okOld || !okNew mutated to &&: one
// object that is not a pod would be read as a nil pod). The hints must
// answer, never panic.
func TestQueueingHintsOddObjects(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(t, testArgs(nil), testNamespaces...)
	payments := st.MakePod().Name("p").Namespace("payments").Obj()
	eu := node("n", regionKey, "eu-west-1")
	tests := []struct {
		name     string
		hint     fwk.QueueingHintFn
		old, new interface{}
		want     fwk.QueueingHint
		wantErr  bool
	}{
		{name: "node: typed nil old node is an addition", hint: pl.isSchedulableAfterNodeChange, old: (*v1.Node)(nil), new: eu, want: fwk.Queue},
		{name: "node: old object not a node is an addition", hint: pl.isSchedulableAfterNodeChange, old: "not a node", new: eu, want: fwk.Queue},
		{name: "pod: old object not a pod", hint: pl.isSchedulableAfterPodLabelChange, old: "not a pod", new: payments, want: fwk.Queue, wantErr: true},
		{name: "pod: new object not a pod", hint: pl.isSchedulableAfterPodLabelChange, old: payments, new: "not a pod", want: fwk.Queue, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.hint(logger, payments, tc.old, tc.new)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want an error: %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWatchNamespacesNeedsInformers guards events.go:114 (h == nil ||
// h.SharedInformerFactory() == nil mutated to &&): without a handle, or
// with one without informers, watchNamespaces must return an error, not
// panic. New checks the same before calling it, so only a direct call
// reaches this guard.
func TestWatchNamespacesNeedsInformers(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	noInformers, err := frameworkruntime.NewFramework(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		h    fwk.Handle
	}{
		{name: "no handle", h: nil},
		{name: "a handle without informers", h: noInformers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := &PlacementPolicy{}
			if err := pl.watchNamespaces(logger, tc.h); err == nil || !strings.Contains(err.Error(), "informers") {
				t.Errorf("watchNamespaces: got %v, want an error about informers", err)
			}
		})
	}
}

// countingActivator counts the calls to Activate and the pods it is given.
type countingActivator struct{ calls, pods int }

func (c *countingActivator) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	c.calls++
	c.pods += len(pods)
}

// TestNamespaceUpdatedOddObjects guards events.go:133 (either || of
// !okOld || !okNew || maps.Equal mutated to &&: a non-namespace object would
// be dereferenced) and events.go:152 (len(retry) > 0 mutated to >=: the
// queue would be asked to activate nothing on every namespace update).
func TestNamespaceUpdatedOddObjects(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, p := range []*v1.Pod{
		st.MakePod().Name("a").Namespace("analytics").Obj(),
		st.MakePod().Name("b").Namespace("default").Obj(),
	} {
		if err := factory.Core().V1().Pods().Informer().GetStore().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	eu, plain := namespace("analytics", "data-residency", "eu"), namespace("analytics")
	tests := []struct {
		name      string
		old, new  interface{}
		wantCalls int
		wantPods  int
	}{
		{name: "old object not a namespace", old: cache.DeletedFinalStateUnknown{Key: "analytics"}, new: plain},
		{name: "new object not a namespace", old: eu, new: cache.DeletedFinalStateUnknown{Key: "analytics"}},
		{name: "label change that frees no pod", old: namespace("default"), new: namespace("default", "team", "x")},
		{name: "label change that frees a pod", old: eu, new: plain, wantCalls: 1, wantPods: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, testArgs(nil), testNamespaces...)
			pl.pods = factory.Core().V1().Pods().Lister()
			a := &countingActivator{}
			pl.activator = a
			pl.namespaceUpdated(logger, tc.old, tc.new)
			if a.calls != tc.wantCalls || a.pods != tc.wantPods {
				t.Errorf("Activate calls, pods = %d, %d; want %d, %d", a.calls, a.pods, tc.wantCalls, tc.wantPods)
			}
		})
	}
}

// foreignState is cycle state data of another type than PreFilter writes.
type foreignState struct{}

func (foreignState) Clone() fwk.StateData { return foreignState{} }

// TestFilterCycleState guards cycleRules: filtering.go's !mayApply (mutated
// away: a pod the gate stops would have its cycle state read) and filtering.go:90 (state != nil mutated to ==: a nil state would
// be read, a present one ignored).
func TestFilterCycleState(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	foreign := func() fwk.CycleState {
		s := framework.NewCycleState()
		s.Write(stateKey, foreignState{})
		return s
	}
	tests := []struct {
		name  string
		state fwk.CycleState
		pod   *v1.Pod
		want  fwk.Code
	}{
		{name: "no cycle state: Filter finds the rules", state: nil, pod: st.MakePod().Name("p").Namespace("payments").Obj(), want: fwk.UnschedulableAndUnresolvable},
		{name: "state of another type: an error", state: foreign(), pod: st.MakePod().Name("p").Namespace("payments").Obj(), want: fwk.Error},
		{name: "the gate stops the pod before the state is read", state: foreign(), pod: st.MakePod().Name("p").Namespace("default").Obj(), want: fwk.Success},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Without the namespaceSelector rule, which opens the gate.
			pl := newPlugin(t, testArgs(func(a *config.PlacementPolicyArgs) { a.Rules = a.Rules[:2] }), testNamespaces...)
			ni := framework.NewNodeInfo()
			ni.SetNode(node("us", regionKey, "us-east-1"))
			if got := pl.Filter(ctx, tc.state, tc.pod, ni); got.Code() != tc.want {
				t.Errorf("Filter: got %v, want code %v", got, tc.want)
			}
		})
	}
}

// TestGateMasks guards newGate's masks: match/gate.go:113 and 116 (|= mutated to
// =: only the last namespace's, or key's, length would be kept) and
// match/gate.go:99 (break mutated to continue: the gate would key a selector on
// its last required key, not its first). Namespaces and keys of different
// lengths must all pass. Keying on any required key would be correct; the
// "zone" and "app" cases pin the first, so that a change is deliberate.
func TestGateMasks(t *testing.T) {
	req := func(name string, mutate func(*config.PlacementRule)) config.PlacementRule {
		r := config.PlacementRule{Name: name, NodeSelector: selector("n", "x"), Action: config.PlacementRequire}
		mutate(&r)
		return r
	}
	pl := newPlugin(t, testArgs(func(a *config.PlacementPolicyArgs) {
		a.Rules = []config.PlacementRule{
			req("ns", func(r *config.PlacementRule) { r.Namespaces = []string{"payments", "ml"} }),
			req("tier", func(r *config.PlacementRule) { r.PodSelector = selector("tier", "db") }),
			req("gpu", func(r *config.PlacementRule) { r.PodSelector = selector("accelerator", "gpu") }),
			// Requirements come sorted by key: the gate keys this rule on "app".
			req("both", func(r *config.PlacementRule) { r.PodSelector = selector("zone", "a", "app", "web") }),
		}
	}), testNamespaces...)
	tests := []struct {
		pod  *v1.Pod
		want bool
	}{
		{pod: st.MakePod().Name("payments").Namespace("payments").Obj(), want: true},
		{pod: st.MakePod().Name("ml").Namespace("ml").Obj(), want: true},
		{pod: st.MakePod().Name("tier").Namespace("default").Label("tier", "db").Obj(), want: true},
		{pod: st.MakePod().Name("gpu").Namespace("default").Label("accelerator", "gpu").Obj(), want: true},
		{pod: st.MakePod().Name("app").Namespace("default").Label("app", "web").Obj(), want: true},
		{pod: st.MakePod().Name("zone").Namespace("default").Label("zone", "a").Obj(), want: false},
		{pod: st.MakePod().Name("plain").Namespace("default").Obj(), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.pod.Name, func(t *testing.T) {
			if got := pl.rules.MayApply(tc.pod); got != tc.want {
				t.Errorf("mayApply = %v, want %v", got, tc.want)
			}
		})
	}
}
