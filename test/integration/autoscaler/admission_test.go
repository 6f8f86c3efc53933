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

package autoscaler

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// renderAdmission renders cfg's PlacementPolicy rules as placement-admission
// does (the file loaded by kube-scheduler's loader), applies them, and
// returns once the API server enforces them; they are deleted when the test
// ends.
func (tc *testContext) renderAdmission(cfg *configv1.KubeSchedulerConfiguration) {
	tc.t.Helper()
	logger, _ := ktesting.NewTestContext(tc.t)
	loaded, err := options.LoadConfigFromFile(logger, testconfig.Write(tc.t, cfg))
	if err != nil {
		tc.t.Fatal(err)
	}
	profiles, err := admission.FromConfig(loaded)
	if err != nil {
		tc.t.Fatal(err)
	}
	res, err := admission.Render(profiles, admission.Options{})
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(func() {
		if err := admission.Delete(context.Background(), client, res); err != nil {
			tc.t.Errorf("deleting the admission policies: %v", err)
		}
	})
	if err := admission.Apply(tc.ctx, client, res); err != nil {
		tc.t.Fatal(err)
	}
	if err := admission.WaitInForce(tc.ctx, client, tc.ns, provisionTimeout); err != nil {
		tc.t.Fatal(err)
	}
}

// TestResidencyWithAdmissionPolicies is the fix of
// TestResidencyStuckWithoutAffinity: the same rule, rendered by
// placement-admission and applied, writes the EU requirement into each
// payments pod at creation, so Karpenter adds EU nodes only (although its
// us-east-1 pool is preferred and cheaper) and our scheduler binds every pod
// there. One pod has required affinity of its own (an instance type), which
// the rule narrows: it gets an EU node of that type.
func TestResidencyWithAdmissionPolicies(t *testing.T) {
	tc := newTestContext(t)
	for _, np := range usPreferred() {
		tc.createNodePool(np)
	}
	cfg := placementPolicyConfig(v1config.PlacementRule{
		Name:       "eu-data-residency",
		Namespaces: []string{tc.ns},
		NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: v1.LabelTopologyRegion, Operator: metav1.LabelSelectorOpIn, Values: []string{"eu-west-1"}},
		}},
		Action: v1config.PlacementRequire,
	})
	tc.renderAdmission(cfg)
	tc.startScheduler(cfg)

	pods := []*v1.Pod{
		tc.makePod("payments-0", "500m"),
		tc.makePod("payments-1", "500m"),
		requireIn(tc.makePod("payments-m-4x", "500m"), v1.LabelInstanceTypeStable, "m-4x"),
	}
	for _, p := range pods {
		tc.createPod(p)
	}
	bound := map[string]string{}
	tc.poll("every pod to be bound to a node Karpenter adds", provisionTimeout, func(ctx context.Context) (bool, error) {
		for _, p := range pods {
			got, err := client.CoreV1().Pods(tc.ns).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if got.Spec.NodeName == "" {
				return false, nil
			}
			if got.Annotations[admission.AdmittedRulesAnnotation] != "eu-data-residency" {
				t.Errorf("pod %s: annotation %s=%q, want the rule", p.Name, admission.AdmittedRulesAnnotation, got.Annotations[admission.AdmittedRulesAnnotation])
			}
			bound[p.Name] = got.Spec.NodeName
		}
		return true, nil
	})
	type placed struct{ Pod, Region, NodePool, InstanceType string }
	nodes := map[string]v1.Node{}
	for _, n := range tc.nodes() {
		t.Logf("node %s: %s", n.Name, karpenterLabels(n.Labels))
		nodes[n.Name] = n
	}
	var got []placed
	for pod, node := range bound {
		l := nodes[node].Labels
		got = append(got, placed{Pod: pod, Region: l[v1.LabelTopologyRegion], NodePool: l[karpenter.NodePoolLabel], InstanceType: l[v1.LabelInstanceTypeStable]})
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Pod < got[j].Pod })
	// The instance types of the pods without one of their own are
	// Karpenter's choice; only the pod that asks has one to check.
	for i := range got {
		if got[i].Pod != "payments-m-4x" {
			got[i].InstanceType = ""
		}
	}
	want := []placed{
		{Pod: "payments-0", Region: "eu-west-1", NodePool: "region-eu-west-1"},
		{Pod: "payments-1", Region: "eu-west-1", NodePool: "region-eu-west-1"},
		{Pod: "payments-m-4x", Region: "eu-west-1", NodePool: "region-eu-west-1", InstanceType: "m-4x"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("where the pods run (-want +got):\n%s", diff)
	}
	for _, n := range nodes {
		if r := n.Labels[v1.LabelTopologyRegion]; r != "eu-west-1" {
			t.Errorf("Karpenter added node %s in %s: the admitted pods allow eu-west-1 only", n.Name, r)
		}
	}
}
