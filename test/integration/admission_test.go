//go:build !kube1.35

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

// MutatingAdmissionPolicy v1 exists since 1.36 (1.35's v1beta1: the admission package's unit tests).

package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
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

// TestAdmissionPoliciesPlaceAsThePluginDoes schedules the same pods twice on
// four nodes, one per region and capacity type: first with a PlacementPolicy
// profile and no admission policy, then with the default profile under the
// same schedulerName and the policies rendered from the first profile's
// config. Under the rules each kind of pod has one best node, and both runs
// must put every pod on it. Without the rules the default profile would not:
// the spot nodes are the smaller ones, which NodeResourcesFit avoids, and
// every pod asks for a different CPU request, so that no two share a
// scheduling signature and none follows another onto its node.
func TestAdmissionPoliciesPlaceAsThePluginDoes(t *testing.T) {
	tc := newTestContext(t)
	suffix := rand.String(5)
	payments := tc.createNamespace("payments-"+suffix, nil)
	shop := tc.createNamespace("shop-"+suffix, nil)
	name := "admission-placement-" + suffix
	node := func(region, capacity, cpu string) *v1.Node {
		n := makeNode(region+"-"+capacity+"-"+suffix, withLabels(map[string]string{regionLabel: region, "capacity-type": capacity}))
		n.Status.Capacity[v1.ResourceCPU] = resource.MustParse(cpu)
		n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse(cpu)
		return n
	}
	nodes := tc.createNodes(
		node("eu-west-1", "spot", "4"),
		node("eu-west-1", "on-demand", "8"),
		node("us-east-1", "spot", "4"),
		node("us-east-1", "on-demand", "8"),
	)
	prefer := func(rule string, weight int32, pods *metav1.LabelSelector, ns []string, key, value string) v1config.PlacementRule {
		return v1config.PlacementRule{Name: rule + "-" + suffix, PodSelector: pods, Namespaces: ns, Action: "Prefer", Weight: ptr.To(weight),
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}}
	}
	workload := func(w string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"workload": w}}
	}
	rules := []v1config.PlacementRule{
		{Name: "eu-" + suffix, Namespaces: []string{payments}, Action: "Require",
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{regionLabel: "eu-west-1"}}},
		prefer("batch-spot", 50, workload("batch"), []string{payments, shop}, "capacity-type", "spot"),
		prefer("services-on-demand", 50, workload("service"), []string{payments, shop}, "capacity-type", "on-demand"),
		prefer("shop-us", 10, nil, []string{shop}, regionLabel, "us-east-1"),
	}
	withPlugin := placementConfig(1, rules...)
	withPlugin.Profiles[0].SchedulerName = ptr.To(name)
	defaults := schedulerConfig(configv1.KubeSchedulerProfile{SchedulerName: ptr.To(name)})

	want := map[string]string{}
	var pods []*v1.Pod
	for _, k := range []struct{ ns, workload, node string }{
		{payments, "batch", nodes[0]},
		{payments, "service", nodes[1]},
		{shop, "batch", nodes[2]},
		{shop, "service", nodes[3]},
	} {
		for i := range 3 {
			p := tc.makePod(fmt.Sprintf("%s-%d", k.workload, i))
			p.Namespace = k.ns
			p.Labels = map[string]string{"workload": k.workload}
			p.Spec.SchedulerName = name
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(100+50*len(pods)), resource.DecimalSI)
			pods = append(pods, p)
			want[k.ns+"/"+p.Name] = k.node
		}
	}
	place := func(config *configv1.KubeSchedulerConfiguration) map[string]string {
		t.Helper()
		s := tc.startScheduler(config)
		defer s.Stop()
		got := map[string]string{}
		for _, p := range pods {
			tc.createPod(p.DeepCopy())
		}
		for _, ns := range []string{payments, shop} {
			var names []string
			for _, p := range pods {
				if p.Namespace == ns {
					names = append(names, p.Name)
				}
			}
			for pod, node := range tc.waitScheduledIn(ns, names...) {
				got[ns+"/"+pod] = node
			}
			for _, n := range names {
				tc.deletePod(ns, n)
			}
		}
		return got
	}

	byPlugin := place(withPlugin)
	if diff := cmp.Diff(want, byPlugin); diff != "" {
		t.Fatalf("placements by the PlacementPolicy profile (-want +got):\n%s", diff)
	}

	s, err := tc.setupScheduler(withPlugin)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := admission.FromConfig(&s.Config.ComponentConfig)
	s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	res, err := admission.Render(profiles, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tc.applyAdmissionPolicies(res)
	byAdmission := place(defaults)
	if diff := cmp.Diff(byPlugin, byAdmission); diff != "" {
		t.Errorf("placements by the default profile with the admission policies (+) against the PlacementPolicy profile without them (-):\n%s", diff)
	}
}

// TestShippedConfigsRenderAdmittedPolicies checks that the API server takes
// every object rendered from the repository's PlacementPolicy configs: their
// CEL compiles against the Pod schema.
func TestShippedConfigsRenderAdmittedPolicies(t *testing.T) {
	tc := newTestContext(t)
	configs, err := filepath.Glob("../../manifests/placementpolicy/*-config.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no shipped config found: %v", err)
	}
	for _, path := range configs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := tc.setupScheduler(shippedConfig(t, path))
			if err != nil {
				t.Fatal(err)
			}
			profiles, err := admission.FromConfig(&s.Config.ComponentConfig)
			if err != nil {
				t.Fatal(err)
			}
			res, err := admission.Render(profiles, admission.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Policies) == 0 {
				t.Fatal("nothing rendered")
			}
			dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
			client := adminClient.AdmissionregistrationV1()
			for _, p := range res.Policies {
				if _, err := client.MutatingAdmissionPolicies().Create(tc.ctx, p.Policy, dryRun); err != nil {
					t.Errorf("policy of rule %s: %v", p.Rule, err)
				}
				if _, err := client.MutatingAdmissionPolicyBindings().Create(tc.ctx, p.Binding, dryRun); err != nil {
					t.Errorf("binding of rule %s: %v", p.Rule, err)
				}
			}
		})
	}
}
