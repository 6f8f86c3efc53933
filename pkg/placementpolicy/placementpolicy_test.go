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

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
)

const regionKey = "topology.kubernetes.io/region"

var daemonSetKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}

func selector(kv ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func inRegions(regions ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: regionKey, Operator: metav1.LabelSelectorOpIn, Values: regions},
	}}
}

// testRules are the examples: data residency, licensed nodes, spot.
func testRules() []config.PlacementRule {
	return []config.PlacementRule{
		{Name: "eu-data-residency", Namespaces: []string{"payments"}, NodeSelector: inRegions("eu-west-1", "eu-central-1"), Action: config.PlacementRequire},
		{Name: "licensed", PodSelector: selector("license", "oracle"), NodeSelector: selector("licensed", "oracle"), Action: config.PlacementRequire},
		{Name: "residency-by-label", NamespaceSelector: selector("data-residency", "eu"), NodeSelector: inRegions("eu-west-1", "eu-central-1"), Action: config.PlacementRequire},
		{Name: "batch-prefers-spot", PodSelector: selector("workload", "batch"), NodeSelector: selector("capacity", "spot"), Action: config.PlacementPrefer, Weight: 10},
		{Name: "batch-prefers-eu", PodSelector: selector("workload", "batch"), NodeSelector: inRegions("eu-west-1"), Action: config.PlacementPrefer, Weight: 30},
		{Name: "gpu", PodSelector: selector("accelerator", "gpu"), NodeSelector: selector("gpu", "true"), Action: config.PlacementRequire},
	}
}

func testArgs(mutate func(*config.PlacementPolicyArgs)) *config.PlacementPolicyArgs {
	args := defaultArgs()
	args.Rules = testRules()
	if mutate != nil {
		mutate(args)
	}
	return args
}

// newPlugin builds the plugin on a framework handle whose informers know the
// given namespaces.
func newPlugin(t testing.TB, args runtime.Object, namespaces ...*v1.Namespace) *PlacementPolicy {
	t.Helper()
	pl, err := newPluginErr(t, args, namespaces...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl
}

func newPluginErr(t testing.TB, args runtime.Object, namespaces ...*v1.Namespace) (*PlacementPolicy, error) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, ns := range namespaces {
		if err := factory.Core().V1().Namespaces().Informer().GetStore().Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, args, fh)
	if err != nil {
		return nil, err
	}
	return p.(*PlacementPolicy), nil
}

func namespace(name string, kv ...string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: selector(kv...).MatchLabels}}
}

var testNamespaces = []*v1.Namespace{
	namespace("payments"),
	namespace("analytics", "data-residency", "eu"),
	namespace("default"),
	namespace("kube-system"),
}

func node(name string, kv ...string) *v1.Node {
	n := st.MakeNode().Name(name).Obj()
	n.Labels = selector(kv...).MatchLabels
	return n
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{name: "nil args are the defaults", args: nil},
		{name: "typed nil args are the defaults", args: (*config.PlacementPolicyArgs)(nil)},
		{name: "rules", args: testArgs(nil)},
		{name: "wrong type", args: &config.NodeLessPodsArgs{}, wantErr: "want args of type PlacementPolicyArgs, got *config.NodeLessPodsArgs"},
		{
			name:    "invalid args name the field",
			args:    testArgs(func(a *config.PlacementPolicyArgs) { a.Rules[3].Weight = 0 }),
			wantErr: `invalid PlacementPolicy args: rules[3].weight: Invalid value: 0: must be in the range 1-100`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newPluginErr(t, tc.args)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("New: got error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewReadsNamespacesOnlyWhenNeeded(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	args := testArgs(func(a *config.PlacementPolicyArgs) { a.Rules = a.Rules[:2] })
	// A handle without informers would fail as soon as the plugin asked.
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, args, fh)
	if err != nil {
		t.Fatalf("New without a namespaceSelector: %v", err)
	}
	if p.(*PlacementPolicy).namespaces != nil {
		t.Errorf("the plugin reads namespaces though no rule selects by namespace labels")
	}
	if _, err := New(ctx, testArgs(nil), nil); err == nil || !strings.Contains(err.Error(), "informers") {
		t.Errorf("New with a namespaceSelector and no handle: got %v, want an error about informers", err)
	}
}

func TestRulesFor(t *testing.T) {
	tests := []struct {
		name string
		args *config.PlacementPolicyArgs
		pod  *v1.Pod
		want []string
	}{
		{name: "no rule applies", pod: st.MakePod().Name("p").Namespace("default").Obj(), want: nil},
		{name: "by namespace", pod: st.MakePod().Name("p").Namespace("payments").Obj(), want: []string{"eu-data-residency"}},
		{name: "by pod labels", pod: st.MakePod().Name("p").Namespace("default").Label("license", "oracle").Obj(), want: []string{"licensed"}},
		{name: "by namespace labels", pod: st.MakePod().Name("p").Namespace("analytics").Obj(), want: []string{"residency-by-label"}},
		{
			name: "several rules, sorted by name",
			pod:  st.MakePod().Name("p").Namespace("payments").Label("license", "oracle").Label("workload", "batch").Obj(),
			want: []string{"batch-prefers-eu", "batch-prefers-spot", "eu-data-residency", "licensed"},
		},
		{
			name: "selectors of one rule are ANDed",
			args: testArgs(func(a *config.PlacementPolicyArgs) {
				a.Rules = []config.PlacementRule{{Name: "both", Namespaces: []string{"payments"}, PodSelector: selector("tier", "db"),
					NodeSelector: inRegions("eu-west-1"), Action: config.PlacementRequire}}
			}),
			pod:  st.MakePod().Name("p").Namespace("default").Label("tier", "db").Obj(),
			want: nil,
		},
		{
			name: "DaemonSet pods are exempt by default",
			pod:  st.MakePod().Name("p").Namespace("payments").OwnerReference("ds", daemonSetKind).Obj(),
			want: nil,
		},
		{
			name: "DaemonSet pods follow the rules when ignoreDaemonSetPods is false",
			args: testArgs(func(a *config.PlacementPolicyArgs) { a.IgnoreDaemonSetPods = false }),
			pod:  st.MakePod().Name("p").Namespace("payments").OwnerReference("ds", daemonSetKind).Obj(),
			want: []string{"eu-data-residency"},
		},
		{
			name: "excluded namespaces are exempt",
			args: testArgs(func(a *config.PlacementPolicyArgs) { a.ExcludedNamespaces = []string{"payments"} }),
			pod:  st.MakePod().Name("p").Namespace("payments").Obj(),
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args == nil {
				args = testArgs(nil)
			}
			pl := newPlugin(t, args, testNamespaces...)
			s, err := pl.rulesFor(tc.pod)
			if err != nil {
				t.Fatalf("rulesFor: %v", err)
			}
			if diff := cmp.Diff(tc.want, s.names()); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRulesForMissingNamespace(t *testing.T) {
	pl := newPlugin(t, testArgs(nil))
	_, err := pl.rulesFor(st.MakePod().Name("p").Namespace("gone").Obj())
	if err == nil || !strings.Contains(err.Error(), `namespace "gone"`) {
		t.Fatalf("got %v, want an error naming the namespace", err)
	}
}

// runFilter runs PreFilter and, unless it skips, Filter on each node, and
// returns each node's status message ("" when it passes).
func runFilter(t *testing.T, pl *PlacementPolicy, pod *v1.Pod, nodes ...*v1.Node) (skipped bool, got map[string]string) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	state := framework.NewCycleState()
	_, status := pl.PreFilter(ctx, state, pod, nil)
	if status.IsSkip() {
		return true, nil
	}
	if !status.IsSuccess() {
		t.Fatalf("PreFilter: %v", status)
	}
	got = map[string]string{}
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		status := pl.Filter(ctx, state, pod, ni)
		switch {
		case status.IsSuccess():
			got[n.Name] = ""
		case status.Code() == fwk.UnschedulableAndUnresolvable:
			got[n.Name] = status.Message()
		default:
			t.Fatalf("Filter(%s): unexpected status %v", n.Name, status)
		}
	}
	return false, got
}

func TestFilter(t *testing.T) {
	nodes := []*v1.Node{
		node("eu-licensed", regionKey, "eu-west-1", "licensed", "oracle"),
		node("eu", regionKey, "eu-central-1"),
		node("us-licensed", regionKey, "us-east-1", "licensed", "oracle"),
		node("unlabelled"),
	}
	tests := []struct {
		name        string
		pod         *v1.Pod
		wantSkipped bool
		want        map[string]string
	}{
		{name: "no rule: skipped", pod: st.MakePod().Name("p").Namespace("default").Obj(), wantSkipped: true},
		{name: "Prefer rules only: skipped", pod: st.MakePod().Name("p").Namespace("default").Label("workload", "batch").Obj(), wantSkipped: true},
		{
			name: "data residency",
			pod:  st.MakePod().Name("p").Namespace("payments").Obj(),
			want: map[string]string{
				"eu-licensed": "", "eu": "",
				"us-licensed": `node(s) didn't match placement rule "eu-data-residency"`,
				"unlabelled":  `node(s) didn't match placement rule "eu-data-residency"`,
			},
		},
		{
			name: "two rules combined: a node must match both, the first unmatched is named",
			pod:  st.MakePod().Name("p").Namespace("payments").Label("license", "oracle").Obj(),
			want: map[string]string{
				"eu-licensed": "",
				"eu":          `node(s) didn't match placement rule "licensed"`,
				"us-licensed": `node(s) didn't match placement rule "eu-data-residency"`,
				"unlabelled":  `node(s) didn't match placement rule "eu-data-residency"`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, testArgs(nil), testNamespaces...)
			skipped, got := runFilter(t, pl, tc.pod, nodes...)
			if skipped != tc.wantSkipped {
				t.Fatalf("PreFilter skipped: got %v, want %v", skipped, tc.wantSkipped)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFilterWithoutPreFilter covers a profile that disables PreFilter: Filter
// finds the rules itself.
func TestFilterWithoutPreFilter(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := newPlugin(t, testArgs(nil), testNamespaces...)
	ni := framework.NewNodeInfo()
	ni.SetNode(node("us", regionKey, "us-east-1"))
	status := pl.Filter(ctx, framework.NewCycleState(), st.MakePod().Name("p").Namespace("payments").Obj(), ni)
	if status.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("Filter: got %v, want UnschedulableAndUnresolvable", status)
	}
	if status := pl.Filter(ctx, framework.NewCycleState(), st.MakePod().Name("p").Namespace("payments").Obj(), framework.NewNodeInfo()); status.Code() != fwk.Error {
		t.Errorf("Filter on a NodeInfo without node: got %v, want Error", status)
	}
}

func TestScore(t *testing.T) {
	nodes := []*v1.Node{
		node("spot-eu", "capacity", "spot", regionKey, "eu-west-1"),
		node("spot-us", "capacity", "spot", regionKey, "us-east-1"),
		node("ondemand-eu", regionKey, "eu-west-1"),
		node("ondemand-us", regionKey, "us-east-1"),
	}
	tests := []struct {
		name        string
		pod         *v1.Pod
		wantSkipped bool
		wantRaw     []int64
		want        []int64
	}{
		{name: "no rule: skipped", pod: st.MakePod().Name("p").Namespace("default").Obj(), wantSkipped: true},
		{name: "Require rules only: skipped", pod: st.MakePod().Name("p").Namespace("payments").Obj(), wantSkipped: true},
		{
			name:    "weights of the matched Prefer rules add up",
			pod:     st.MakePod().Name("p").Namespace("default").Label("workload", "batch").Obj(),
			wantRaw: []int64{40, 10, 30, 0},
			want:    []int64{100, 25, 75, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl := newPlugin(t, testArgs(nil), testNamespaces...)
			state := framework.NewCycleState()
			if _, status := pl.PreFilter(ctx, state, tc.pod, nil); !status.IsSuccess() && !status.IsSkip() {
				t.Fatalf("PreFilter: %v", status)
			}
			status := pl.PreScore(ctx, state, tc.pod, nil)
			if status.IsSkip() != tc.wantSkipped {
				t.Fatalf("PreScore: got %v, want skipped %v", status, tc.wantSkipped)
			}
			if tc.wantSkipped {
				return
			}
			var scores fwk.NodeScoreList
			var raw []int64
			for _, n := range nodes {
				ni := framework.NewNodeInfo()
				ni.SetNode(n)
				s, status := pl.Score(ctx, state, tc.pod, ni)
				if !status.IsSuccess() {
					t.Fatalf("Score(%s): %v", n.Name, status)
				}
				raw = append(raw, s)
				scores = append(scores, fwk.NodeScore{Name: n.Name, Score: s})
			}
			if diff := cmp.Diff(tc.wantRaw, raw); diff != "" {
				t.Errorf("raw scores (-want +got):\n%s", diff)
			}
			if status := pl.NormalizeScore(ctx, state, tc.pod, scores); !status.IsSuccess() {
				t.Fatalf("NormalizeScore: %v", status)
			}
			var got []int64
			for _, s := range scores {
				got = append(got, s.Score)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSignPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := newPlugin(t, testArgs(nil), testNamespaces...)
	sign := func(pod *v1.Pod) any {
		t.Helper()
		fragments, status := pl.SignPod(ctx, pod)
		if !status.IsSuccess() {
			t.Fatalf("SignPod(%s): %v", pod.Name, status)
		}
		if len(fragments) != 1 || fragments[0].Key != signatureKey {
			t.Fatalf("SignPod(%s): got %v, want one %s fragment", pod.Name, fragments, signatureKey)
		}
		return fragments[0].Value
	}
	plain := sign(st.MakePod().Name("a").Namespace("default").Obj())
	otherPlain := sign(st.MakePod().Name("b").Namespace("default").Label("app", "x").Obj())
	batch := sign(st.MakePod().Name("c").Namespace("default").Label("workload", "batch").Obj())
	payments := sign(st.MakePod().Name("d").Namespace("payments").Obj())
	if !cmp.Equal(plain, otherPlain) {
		t.Errorf("pods no rule applies to sign differently: %v, %v", plain, otherPlain)
	}
	if cmp.Equal(plain, batch) || cmp.Equal(batch, payments) || cmp.Equal(plain, payments) {
		t.Errorf("pods with different rules sign alike: %v, %v, %v", plain, batch, payments)
	}
	// The signature reads no namespace: a pod whose namespace the informer
	// does not hold yet still signs, and PreFilter reports the error.
	if _, status := pl.SignPod(ctx, st.MakePod().Name("e").Namespace("gone").Obj()); !status.IsSuccess() {
		t.Errorf("SignPod in a namespace the informer does not hold: got %v, want Success", status)
	}
}

func TestNoRulePathDoesNotAllocate(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := newPlugin(t, testArgs(nil), testNamespaces...)
	pod := st.MakePod().Name("p").Namespace("default").Label("app", "web").Obj()
	state := framework.NewCycleState()
	allocs := testing.AllocsPerRun(100, func() {
		if _, status := pl.PreFilter(ctx, state, pod, nil); !status.IsSkip() {
			t.Fatalf("PreFilter: %v", status)
		}
		if status := pl.PreScore(ctx, state, pod, nil); !status.IsSkip() {
			t.Fatalf("PreScore: %v", status)
		}
	})
	if allocs != 0 {
		t.Errorf("PreFilter+PreScore of a pod no rule applies to: %v allocs, want 0", allocs)
	}
}

func TestQueueingHints(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(t, testArgs(nil), testNamespaces...)
	payments := st.MakePod().Name("p").Namespace("payments").Obj()
	eu := node("n", regionKey, "eu-west-1")
	us := node("n", regionKey, "us-east-1")

	nodeTests := []struct {
		name     string
		pod      *v1.Pod
		old, new *v1.Node
		want     fwk.QueueingHint
	}{
		{name: "added node matches", pod: payments, new: eu, want: fwk.Queue},
		{name: "added node does not match", pod: payments, new: us, want: fwk.QueueSkip},
		{name: "relabelled into the region", pod: payments, old: us, new: eu, want: fwk.Queue},
		{name: "relabelled out of the region", pod: payments, old: eu, new: us, want: fwk.QueueSkip},
		{name: "matched before and after", pod: payments, old: eu, new: node("n", regionKey, "eu-central-1"), want: fwk.QueueSkip},
		{name: "no Require rule applies any more", pod: st.MakePod().Name("p").Namespace("default").Obj(), new: us, want: fwk.Queue},
	}
	for _, tc := range nodeTests {
		t.Run("node/"+tc.name, func(t *testing.T) {
			var old interface{}
			if tc.old != nil {
				old = tc.old
			}
			got, err := pl.isSchedulableAfterNodeChange(logger, tc.pod, old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}

	withLicense := st.MakePod().Name("p").UID("p").Namespace("default").Label("license", "oracle").Obj()
	noLabels := st.MakePod().Name("p").UID("p").Namespace("default").Obj()
	batch := st.MakePod().Name("p").UID("p").Namespace("default").Label("workload", "batch").Obj()
	gpu := st.MakePod().Name("p").UID("p").Namespace("default").Label("accelerator", "gpu").Obj()
	// Before 1.37 the event is fwk.Pod, which fires for every pod's label
	// change: a pending pod must not be requeued by another pod's.
	pending := st.MakePod().Name("q").UID("q").Namespace("default").Label("license", "oracle").Obj()
	podTests := []struct {
		name     string
		pod      *v1.Pod // the pending pod; nil: new
		old, new *v1.Pod
		want     fwk.QueueingHint
	}{
		{name: "label drops a Require rule", old: withLicense, new: noLabels, want: fwk.Queue},
		{name: "label change keeps the Require rules", old: noLabels, new: batch, want: fwk.QueueSkip},
		{name: "label swaps one Require rule for another", old: withLicense, new: gpu, want: fwk.Queue},
		{name: "label adds a Require rule", old: noLabels, new: withLicense, want: fwk.QueueSkip},
		{name: "label of another pod drops a Require rule", pod: pending, old: withLicense, new: noLabels, want: fwk.QueueSkip},
	}
	for _, tc := range podTests {
		t.Run("pod/"+tc.name, func(t *testing.T) {
			pod := tc.pod
			if pod == nil {
				pod = tc.new
			}
			got, err := pl.isSchedulableAfterPodLabelChange(logger, pod, tc.old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}

}

// recorder is a PodActivator that records what it is asked to activate.
type recorder struct{ activated []string }

func (r *recorder) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	for k := range pods {
		r.activated = append(r.activated, k)
	}
	slices.Sort(r.activated)
}

// TestNamespaceRelabelled checks what the namespace handler retries: the
// pending pods of the relabelled namespace whose Require rules change.
func TestNamespaceRelabelled(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pending := func(name, ns string) *v1.Pod { return st.MakePod().Name(name).Namespace(ns).Obj() }
	pods := []*v1.Pod{
		pending("a", "analytics"),
		pending("b", "analytics"),
		st.MakePod().Name("bound").Namespace("analytics").Node("n1").Obj(),
		st.MakePod().Name("ds").Namespace("analytics").OwnerReference("ds", daemonSetKind).Obj(),
		pending("elsewhere", "default"),
	}
	tests := []struct {
		name     string
		old, new *v1.Namespace
		want     []string
	}{
		{name: "label removed", old: namespace("analytics", "data-residency", "eu"), new: namespace("analytics"),
			want: []string{"analytics/a", "analytics/b"}},
		{name: "label added: more rules only narrow the nodes", old: namespace("analytics"),
			new: namespace("analytics", "data-residency", "eu"), want: nil},
		{name: "unrelated label change", old: namespace("analytics", "data-residency", "eu"),
			new: namespace("analytics", "data-residency", "eu", "team", "x"), want: nil},
		{name: "no label change", old: namespace("analytics", "data-residency", "eu"), new: namespace("analytics", "data-residency", "eu"), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, testArgs(nil), testNamespaces...)
			factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
			for _, p := range pods {
				if err := factory.Core().V1().Pods().Informer().GetStore().Add(p); err != nil {
					t.Fatal(err)
				}
			}
			pl.pods = factory.Core().V1().Pods().Lister()
			r := &recorder{}
			pl.activator = r
			pl.namespaceUpdated(logger, tc.old, tc.new)
			if diff := cmp.Diff(tc.want, r.activated); diff != "" {
				t.Errorf("activated (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	resources := func(pl *PlacementPolicy) []fwk.EventResource {
		events, err := pl.EventsToRegister(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []fwk.EventResource
		for _, e := range events {
			if e.QueueingHintFn == nil {
				t.Errorf("event %v has no queueing hint", e.Event)
			}
			got = append(got, e.Event.Resource)
		}
		return got
	}
	if diff := cmp.Diff([]fwk.EventResource{fwk.Node, ownPodResource}, resources(newPlugin(t, testArgs(nil)))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestDefaultArgs checks that a profile without pluginConfig gets the v1
// defaults: no rules, DaemonSet pods exempt.
func TestDefaultArgs(t *testing.T) {
	want := &config.PlacementPolicyArgs{IgnoreDaemonSetPods: true}
	if diff := cmp.Diff(want, defaultArgs()); diff != "" {
		t.Errorf("defaultArgs (-want +got):\n%s", diff)
	}
}

// defaultArgs returns the args of a profile without a pluginConfig entry.
func defaultArgs() *config.PlacementPolicyArgs {
	args, err := scheme.DefaultArgs(Name)
	if err != nil {
		panic(err)
	}
	return args.(*config.PlacementPolicyArgs)
}
