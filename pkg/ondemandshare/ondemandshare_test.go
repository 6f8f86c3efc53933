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

package ondemandshare

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

var onDemandNodes = []string{"od-1", "od-2"}

// TestGuard runs whole cycles for an undecided pod "new" of Deployment web
// whose other pods are given: under the minimum Filter keeps only on-demand
// nodes and says why; at it, Score prefers spot.
func TestGuard(t *testing.T) {
	self := webPod("new")
	tests := []struct {
		name    string
		percent int32
		// absent: the informer has not shown the pod yet.
		absent   bool
		others   []*v1.Pod
		assumed  []*v1.Pod
		wantHeld bool
		// reason is the rejection of a node that is not on-demand.
		reason string
	}{
		{
			name: "one replica at 30% is on-demand", percent: 30, wantHeld: true,
			reason: `node(s) are not on-demand: policy "web" has 0/1 replicas on-demand`,
		},
		{
			name: "the informer has not shown the pod yet", percent: 50, absent: true, wantHeld: true,
			others: []*v1.Pod{webPod("bound-od", on("od-1")), webPod("bound-spot", on("spot-1"))},
			reason: `node(s) are not on-demand: policy "web" has 1/2 replicas on-demand`,
		},
		{
			name: "under the minimum", percent: 50, wantHeld: true,
			others: []*v1.Pod{
				webPod("decided-od", decidedAs(share.OnDemand)),
				webPod("bound-od", on("od-2")),
				webPod("decided-spot", decidedAs(share.Spot), on("spot-1")),
				webPod("bound-spot", on("spot-2")),
				// Not replicas: neither counts.
				webPod("terminating-od", on("od-1"), deleting),
				webPod("finished-od", on("od-1"), finished),
			},
			reason: `node(s) are not on-demand: policy "web" has 2/3 replicas on-demand`,
		},
		{
			name: "at the minimum", percent: 50,
			others: []*v1.Pod{
				webPod("decided-od", decidedAs(share.OnDemand)),
				webPod("bound-od", on("od-2")),
				// Another ReplicaSet of the same Deployment.
				webPod("old-rs-od", on("od-1"), ownedBy(controllerRef("apps/v1", "ReplicaSet", web2.Name, web2.UID))),
				webPod("bound-spot", on("spot-2")),
				webPod("pending", on("")),
			},
		},
		{
			name: "a pod of another workload does not count", percent: 50, wantHeld: true,
			others: []*v1.Pod{
				webPod("other-od", on("od-1"), ownedBy(controllerRef("apps/v1", "StatefulSet", "db", "s-db"))),
			},
			reason: `node(s) are not on-demand: policy "web" has 0/1 replicas on-demand`,
		},
		{
			name: "assumed on an on-demand node counts", percent: 50,
			others:  []*v1.Pod{webPod("assumed")},
			assumed: []*v1.Pod{webPod("assumed", on("od-1"))},
		},
		{
			name: "assumed on a spot node does not", percent: 50, wantHeld: true,
			others:  []*v1.Pod{webPod("assumed")},
			assumed: []*v1.Pod{webPod("assumed", on("spot-1"))},
			reason:  `node(s) are not on-demand: policy "web" has 0/1 replicas on-demand`,
		},
		{
			name: "unbound and not assumed does not", percent: 50, wantHeld: true,
			others: []*v1.Pod{webPod("pending-1"), webPod("pending-2")},
			reason: `node(s) are not on-demand: policy "web" has 0/2 replicas on-demand`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := defaultWorld(append([]*v1.Pod{self}, tc.others...)...)
			if tc.absent {
				w.pods = tc.others
			}
			w.assumed = tc.assumed
			tfw := newTestFramework(t, argsOf(webPolicy(tc.percent)), w)
			r := tfw.cycle(self)
			if tc.wantHeld {
				if r.skipFilter || !r.skipScore {
					t.Errorf("held: skipped at filter %v, at score %v; want false, true", r.skipFilter, r.skipScore)
				}
				if diff := cmp.Diff(onDemandNodes, r.feasible); diff != "" {
					t.Errorf("feasible nodes (-want +got):\n%s", diff)
				}
				for _, n := range []string{"spot-1", "spot-2", "plain"} {
					if r.reasons[n] != tc.reason {
						t.Errorf("reason on %s = %q, want %q", n, r.reasons[n], tc.reason)
					}
				}
				return
			}
			if !r.skipFilter || r.skipScore || len(r.feasible) != len(w.nodes) {
				t.Errorf("not held: skipped at filter %v, at score %v, %d feasible; want true, false, %d",
					r.skipFilter, r.skipScore, len(r.feasible), len(w.nodes))
			}
			want := map[string]int64{"od-1": fwk.MinNodeScore, "od-2": fwk.MinNodeScore, "spot-1": fwk.MaxNodeScore, "spot-2": fwk.MaxNodeScore, "plain": fwk.MinNodeScore}
			if diff := cmp.Diff(want, r.scores); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithoutCycleState calls Filter and Score as a profile that enables
// the plugin without PreFilter and PreScore would: they count for
// themselves.
func TestWithoutCycleState(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	held, free := webPod("held"), webPod("free", ownedBy(controllerRef("apps/v1", "StatefulSet", "db", "s-db")))
	w := defaultWorld(held, free, webPod("db-0", on("od-1"), ownedBy(controllerRef("apps/v1", "StatefulSet", "db", "s-db"))))
	tfw := newTestFramework(t, argsOf(webPolicy(50)), w)
	spot, err := tfw.snapshot.NodeInfos().Get("spot-1")
	if err != nil {
		t.Fatal(err)
	}
	if s := tfw.pl.Filter(ctx, nil, held, spot); s.Code() != fwk.UnschedulableAndUnresolvable {
		t.Errorf("Filter of a held pod on spot: %v, want UnschedulableAndUnresolvable", s)
	}
	if s := tfw.pl.Filter(ctx, nil, free, spot); !s.IsSuccess() {
		t.Errorf("Filter of a free pod on spot: %v, want success", s)
	}
	if got, s := tfw.pl.Score(ctx, nil, free, spot); !s.IsSuccess() || got != fwk.MaxNodeScore {
		t.Errorf("Score of a free pod on spot: %d, %v; want %d", got, s, fwk.MaxNodeScore)
	}
}

// TestSkip checks that the plugin leaves alone, at filter and at score, the
// pods no policy selects and the decided ones.
func TestSkip(t *testing.T) {
	byLabel := webPolicy(100)
	byLabel.Namespaces = nil
	byLabel.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"share": "on"}}
	statefulOnly := webPolicy(100)
	statefulOnly.WorkloadKinds = []config.WorkloadKind{config.WorkloadStatefulSet}
	db := ownedBy(controllerRef("apps/v1", "StatefulSet", "db", "s-db"))
	replicaSetOnly := webPolicy(100)
	replicaSetOnly.WorkloadKinds = []config.WorkloadKind{config.WorkloadReplicaSet}
	tests := []struct {
		name   string
		policy config.OnDemandSharePolicy
		pod    *v1.Pod
	}{
		{name: "decided on-demand", policy: webPolicy(100), pod: webPod("p", decidedAs(share.OnDemand))},
		{name: "decided spot", policy: webPolicy(100), pod: webPod("p", decidedAs(share.Spot))},
		// A StatefulSet's pods: their workload needs no ReplicaSet of the namespace.
		{name: "another namespace", policy: webPolicy(100), pod: webPod("p", inNamespace("other"), db)},
		{name: "an excluded namespace", policy: byLabel, pod: webPod("p", inNamespace("kube-system"), db)},
		{name: "pod labels the podSelector does not match", policy: webPolicy(100), pod: webPod("p", labelled("app", "api"))},
		{name: "namespace labels the namespaceSelector does not match", policy: byLabel, pod: webPod("p", inNamespace("other"), db)},
		{name: "a kind the policy does not count", policy: statefulOnly, pod: webPod("p")},
		{name: "a ReplicaSet-only policy and a Deployment's pod", policy: replicaSetOnly, pod: webPod("p")},
		{name: "a DaemonSet pod", policy: webPolicy(100), pod: webPod("p", ownedBy(controllerRef("apps/v1", "DaemonSet", "ds", "ds")))},
		{name: "a pod without a controller", policy: webPolicy(100), pod: webPod("p", func(p *v1.Pod) { p.OwnerReferences = nil })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := defaultWorld(tc.pod)
			w.namespaces = append(w.namespaces, namespace("labelled", "share", "on"))
			tfw := newTestFramework(t, argsOf(tc.policy), w)
			r := tfw.cycle(tc.pod)
			if !r.skipFilter || !r.skipScore || len(r.feasible) != len(w.nodes) {
				t.Errorf("skipped at filter %v, at score %v, %d feasible; want true, true, %d", r.skipFilter, r.skipScore, len(r.feasible), len(w.nodes))
			}
			if _, err := r.state.Read(stateKey); err == nil {
				t.Errorf("the cycle state holds a tally for a pod the plugin leaves alone")
			}
		})
	}
	// The same selectors do select: the cases above skip for the reason named.
	t.Run("control: a labelled namespace is selected", func(t *testing.T) {
		pod := webPod("p", inNamespace("labelled"), db)
		w := defaultWorld(pod)
		w.namespaces = append(w.namespaces, namespace("labelled", "share", "on"))
		if r := newTestFramework(t, argsOf(byLabel), w).cycle(pod); r.skipFilter {
			t.Errorf("a pod in a namespace the namespaceSelector matches was skipped")
		}
	})
}

// TestSkipAllocatesNothing: PreFilter runs for every pod of the profile,
// most of which no policy selects or are decided.
func TestSkipAllocatesNothing(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pods := []*v1.Pod{
		webPod("decided", decidedAs(share.Spot)),
		webPod("elsewhere", inNamespace("other")),
		webPod("api", labelled("app", "api")),
		webPod("daemon", ownedBy(controllerRef("apps/v1", "DaemonSet", "ds", "ds"))),
	}
	tfw := newTestFramework(t, argsOf(webPolicy(50)), defaultWorld(pods...))
	state := framework.NewCycleState()
	for _, pod := range pods {
		if n := testing.AllocsPerRun(50, func() {
			if _, s := tfw.pl.PreFilter(ctx, state, pod, nil); s.Code() != fwk.Skip {
				t.Fatalf("%s: PreFilter = %v, want Skip", pod.Name, s)
			}
		}); n != 0 {
			t.Errorf("%s: PreFilter allocates %v times, want 0", pod.Name, n)
		}
	}
}

// TestFirstPolicyByName checks that a pod two policies select counts under
// the first by name, and that a policy whose kinds do not hold the pod's
// workload lets the next one select it.
func TestFirstPolicyByName(t *testing.T) {
	first, second := webPolicy(100), webPolicy(10)
	first.Name, second.Name = "a-all", "b-some"
	jobsOnly := webPolicy(100)
	jobsOnly.Name, jobsOnly.WorkloadKinds = "0-jobs", []config.WorkloadKind{config.WorkloadJob}
	pod := webPod("p")
	tfw := newTestFramework(t, argsOf(second, jobsOnly, first), defaultWorld(pod))
	p, k, err := tfw.pl.policyFor(pod)
	if err != nil {
		t.Fatal(err)
	}
	if p == nil || p.Name != "a-all" || k.Kind != config.WorkloadDeployment || k.Name != "web" {
		t.Errorf("policyFor = %v, %+v; want a-all and Deployment web", p, k)
	}
}

func TestNew(t *testing.T) {
	bad := webPolicy(130)
	tests := []struct {
		name    string
		args    runtime.Object
		handle  bool
		wantErr string
	}{
		{name: "nil args: no policy, no informer needed", args: nil},
		{name: "policies", args: argsOf(webPolicy(30)), handle: true},
		{name: "wrong type", args: &config.PlacementPolicyArgs{}, wantErr: "want args of type OnDemandShareArgs"},
		{name: "invalid args", args: argsOf(bad), wantErr: "policies[0].minOnDemandPercent"},
		{name: "policies without a handle", args: argsOf(webPolicy(30)), wantErr: "needs the scheduler's informers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var err error
			if tc.handle {
				newTestFramework(t, tc.args.(*config.OnDemandShareArgs), defaultWorld())
			} else {
				_, err = New(ctx, tc.args, nil)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New: got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}
