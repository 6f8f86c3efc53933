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
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
)

// TestAdmissionPoliciesAgreeWithThePlugin renders PlacementPolicy rules as
// MutatingAdmissionPolicies, lets the real API server admit a table of pods
// with them, and checks on every node of a table that in-tree NodeAffinity
// on the admitted pod decides what NodeAffinity and PlacementPolicy decide
// together on the pod as written: the same nodes pass Filter, and the raw
// Score of the admitted pod is the pod's own preference plus the rules'.
func TestAdmissionPoliciesAgreeWithThePlugin(t *testing.T) {
	tc := newTestContext(t)
	suffix := rand.String(5)
	payments := tc.createNamespace("payments-"+suffix, nil)
	batch := tc.createNamespace("batch-"+suffix, map[string]string{"tier": "batch"})
	excluded := tc.createNamespace("ops-"+suffix, map[string]string{"tier": "batch"})
	profileName := "admission-" + suffix

	args := &config.PlacementPolicyArgs{
		IgnoreDaemonSetPods: true,
		ExcludedNamespaces:  []string{excluded},
		Rules: []config.PlacementRule{
			{
				Name: "eu-" + suffix, Namespaces: []string{payments}, Action: config.PlacementRequire,
				NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: regionLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"eu-west-1", "eu-central-1"}},
				}},
			},
			{
				Name: "gpu-" + suffix, PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
				Action:       config.PlacementRequire,
				NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "true"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "licensed", Operator: metav1.LabelSelectorOpDoesNotExist}}},
			},
			{
				Name: "spot-" + suffix, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}},
				Action: config.PlacementPrefer, Weight: 30,
				NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"capacity-type": "spot"}},
			},
			{
				Name: "not-us-" + suffix, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}},
				Action: config.PlacementPrefer, Weight: 7,
				NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: regionLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"us-east-1"}},
				}},
			},
		},
	}
	res, err := admission.Render([]admission.ProfileArgs{{SchedulerName: profileName, Args: args, Filter: true, Score: true}}, admission.Options{FailurePolicy: "Fail"})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if len(res.Policies) != len(args.Rules) {
		t.Fatalf("rendered %d policies for %d rules (skipped: %v)", len(res.Policies), len(args.Rules), res.Skipped)
	}
	tc.applyAdmissionPolicies(res)

	nodes := []*v1.Node{
		makeNode("eu-spot", withLabels(map[string]string{regionLabel: "eu-west-1", "capacity-type": "spot"})),
		makeNode("eu-gpu", withLabels(map[string]string{regionLabel: "eu-central-1", "gpu": "true"})),
		makeNode("eu-gpu-licensed", withLabels(map[string]string{regionLabel: "eu-west-1", "gpu": "true", "licensed": "matlab"})),
		makeNode("us-spot", withLabels(map[string]string{regionLabel: "us-east-1", "capacity-type": "spot"})),
		makeNode("us-gpu-zone-b", withLabels(map[string]string{regionLabel: "us-east-1", "gpu": "true", "zone": "b"})),
		makeNode("no-labels"),
	}

	// Each pod's own affinity, to be kept and narrowed.
	zoneB := v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}
	hasGPU := v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpExists}
	required := func(terms ...v1.NodeSelectorTerm) *v1.Affinity {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	pods := []struct {
		name      string
		namespace string
		labels    map[string]string
		affinity  *v1.Affinity
		selector  map[string]string
		daemonSet bool
		scheduler string
		// want are the rendered rules the API server must apply.
		want []string
	}{
		{name: "payments-plain", namespace: payments, want: []string{"eu"}},
		{name: "payments-own-term", namespace: payments, affinity: required(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{zoneB}}), want: []string{"eu"}},
		{name: "payments-two-terms", namespace: payments, affinity: required(
			v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{zoneB}},
			v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{hasGPU}}), want: []string{"eu"}},
		{name: "payments-match-fields", namespace: payments, affinity: required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"us-spot"}}}}), want: []string{"eu"}},
		{name: "payments-match-fields-or-expressions", namespace: payments, affinity: required(
			v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"eu-spot"}}}},
			v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{hasGPU}}), want: []string{"eu"}},
		// A term with no requirement matches no node, and must stay so.
		{name: "payments-empty-term", namespace: payments, affinity: required(
			v1.NodeSelectorTerm{}, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{zoneB}}), want: []string{"eu"}},
		{name: "payments-own-preference", namespace: payments, affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 5, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{hasGPU}}}}}},
			want: []string{"eu"}},
		{name: "payments-node-selector", namespace: payments, selector: map[string]string{"gpu": "true"}, want: []string{"eu"}},
		{name: "payments-other-scheduler", namespace: payments, scheduler: "default-scheduler"},
		{name: "payments-daemonset", namespace: payments, daemonSet: true},
		{name: "payments-trainer", namespace: payments, labels: map[string]string{"app": "train"}, want: []string{"eu", "gpu"}},
		{name: "batch-plain", namespace: batch, want: []string{"spot", "not-us"}},
		{name: "batch-trainer-own-preference", namespace: batch, labels: map[string]string{"app": "train"}, affinity: &v1.Affinity{
			PodAntiAffinity: &v1.PodAntiAffinity{},
			NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{zoneB}}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 40, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: regionLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"us-east-1"}}}}}},
			}}, want: []string{"gpu", "spot", "not-us"}},
		{name: "excluded-namespace", namespace: excluded, labels: map[string]string{"app": "train"}},
		{name: "elsewhere", namespace: tc.ns},
	}

	agree := newAgreement(t, tc, profileName, args)
	for _, p := range pods {
		t.Run(p.name, func(t *testing.T) {
			pod := tc.makePod(p.name)
			pod.Namespace = p.namespace
			pod.Labels = p.labels
			pod.Spec.Affinity = p.affinity
			pod.Spec.NodeSelector = p.selector
			pod.Spec.SchedulerName = profileName
			if p.scheduler != "" {
				pod.Spec.SchedulerName = p.scheduler
			}
			if p.daemonSet {
				pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "5f6c1e0a-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
			}
			admitted := tc.admitDryRun(t, pod)
			var wantRules []string
			for _, w := range p.want {
				wantRules = append(wantRules, w+"-"+suffix)
			}
			agree.check(t, pod, admitted, nodes, wantRules)
		})
	}
	if t.Failed() {
		var out strings.Builder
		if err := res.WriteYAML(&out, t.Name()); err != nil {
			t.Fatal(err)
		}
		t.Logf("rendered policies:\n%s", out.String())
	}
}
