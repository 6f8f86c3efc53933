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

package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// createNamespace creates a namespace named name with labels, deleted with
// the test's.
func (tc *testContext) createNamespace(name string, labels map[string]string) string {
	tc.t.Helper()
	if _, err := adminClient.CoreV1().Namespaces().Create(tc.ctx,
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating namespace %s: %v", name, err)
	}
	tc.mu.Lock()
	tc.namespaces = append(tc.namespaces, name)
	tc.mu.Unlock()
	return name
}

// applyAdmissionPolicies creates the rendered policies and bindings, deleted
// when the test ends, and returns once the API server applies them.
func (tc *testContext) applyAdmissionPolicies(res *admission.Result) {
	tc.t.Helper()
	tc.t.Cleanup(func() {
		if err := admission.Delete(context.Background(), adminClient, res); err != nil {
			tc.t.Errorf("deleting the admission policies: %v", err)
		}
	})
	if err := admission.Apply(tc.ctx, adminClient, res); err != nil {
		tc.t.Fatal(err)
	}
	if err := admission.WaitInForce(tc.ctx, adminClient, tc.ns, waitTimeout); err != nil {
		tc.t.Fatal(err)
	}
}

// admitDryRun creates pod as a dry run, which runs admission, and returns
// the pod as the API server would have stored it.
func (tc *testContext) admitDryRun(t testing.TB, pod *v1.Pod) *v1.Pod {
	t.Helper()
	if pod.Namespace == "" {
		pod.Namespace = tc.ns
	}
	got, err := adminClient.CoreV1().Pods(pod.Namespace).Create(tc.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return got
}

// agreement runs PlacementPolicy with the args and in-tree NodeAffinity as
// the scheduler runs them, each plugin's PreFilter, Filter, PreScore and
// Score on a fresh cycle state, with the namespaces' labels as the API
// server has them.
type agreement struct {
	ctx     context.Context
	profile string
	pp, na  fwk.Plugin
}

func newAgreement(t *testing.T, tc *testContext, profile string, args *config.PlacementPolicyArgs) *agreement {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	nsList, err := adminClient.CoreV1().Namespaces().List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nsList.Items {
		if err := factory.Core().V1().Namespaces().Informer().GetStore().Add(&nsList.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	fh, err := frameworkruntime.NewFramework(tc.ctx, nil, nil, frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	pp, err := placementpolicy.New(tc.ctx, args, fh)
	if err != nil {
		t.Fatalf("PlacementPolicy: %v", err)
	}
	na, err := nodeaffinity.New(tc.ctx, &schedconfig.NodeAffinityArgs{}, fh, feature.Features{})
	if err != nil {
		t.Fatalf("NodeAffinity: %v", err)
	}
	return &agreement{ctx: tc.ctx, profile: profile, pp: pp, na: na}
}

// decision is what a plugin says of one node.
type decision struct {
	Feasible bool
	Score    int64
}

// decide runs pl's filter and score extension points on pod for every node,
// with the framework's rules: a PreFilter Skip passes every node, a
// PreFilterResult keeps the nodes it names, a PreScore Skip scores 0.
func (a *agreement) decide(t *testing.T, pl fwk.Plugin, pod *v1.Pod, nodes []*v1.Node) map[string]decision {
	t.Helper()
	infos := make([]fwk.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		infos = append(infos, ni)
	}
	out := map[string]decision{}
	state := framework.NewCycleState()
	res, st := pl.(fwk.PreFilterPlugin).PreFilter(a.ctx, state, pod, infos)
	for _, ni := range infos {
		name := ni.Node().Name
		switch {
		case st.IsSkip():
			out[name] = decision{Feasible: true}
		case !st.IsSuccess():
			out[name] = decision{}
		case res != nil && !res.AllNodes() && !res.NodeNames.Has(name):
			out[name] = decision{}
		default:
			out[name] = decision{Feasible: pl.(fwk.FilterPlugin).Filter(a.ctx, state, pod, ni).IsSuccess()}
		}
	}
	scorer := pl.(fwk.ScorePlugin)
	state = framework.NewCycleState()
	if st := pl.(fwk.PreScorePlugin).PreScore(a.ctx, state, pod, infos); st.IsSkip() {
		return out
	} else if !st.IsSuccess() {
		t.Fatalf("%s PreScore: %v", pl.Name(), st)
	}
	for _, ni := range infos {
		s, st := scorer.Score(a.ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("%s Score on %s: %v", pl.Name(), ni.Node().Name, st)
		}
		d := out[ni.Node().Name]
		d.Score = s
		out[ni.Node().Name] = d
	}
	return out
}

// check compares, on every node, NodeAffinity on the admitted pod with
// NodeAffinity and PlacementPolicy on the pod as written (PlacementPolicy
// only when the profile that runs it schedules the pod), and the rules the
// admitted pod says were written into it with wantRules.
func (a *agreement) check(t *testing.T, pod, admitted *v1.Pod, nodes []*v1.Node, wantRules []string) {
	t.Helper()
	var gotRules []string
	if v := admitted.Annotations[admission.AdmittedRulesAnnotation]; v != "" {
		gotRules = strings.Split(v, ",")
	}
	slices.Sort(gotRules)
	slices.Sort(wantRules)
	if diff := cmp.Diff(wantRules, gotRules); diff != "" {
		t.Errorf("rules written into the pod (-want +got):\n%s", diff)
	}
	naPod := a.decide(t, a.na, pod, nodes)
	naAdmitted := a.decide(t, a.na, admitted, nodes)
	want := map[string]decision{}
	for _, n := range nodes {
		d := naPod[n.Name]
		if pod.Spec.SchedulerName == a.profile {
			pp := a.decide(t, a.pp, pod, nodes)[n.Name]
			d.Feasible = d.Feasible && pp.Feasible
			d.Score += pp.Score
		}
		want[n.Name] = d
	}
	if diff := cmp.Diff(want, naAdmitted); diff != "" {
		t.Errorf("NodeAffinity on the admitted pod (+) against NodeAffinity and PlacementPolicy on the pod as written (-):\n%s\nadmitted affinity: %+v", diff, admitted.Spec.Affinity)
	}
}
