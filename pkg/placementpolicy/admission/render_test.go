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

package admission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/adminsched/scheduler-plugins/apis/config"
	_ "github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

func TestFromConfig(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, "testdata/profiles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		SchedulerName string
		Filter, Score bool
		Rules         []string
		IgnoreDS      bool
	}
	var got []summary
	for _, p := range profiles {
		s := summary{SchedulerName: p.SchedulerName, Filter: p.Filter, Score: p.Score, IgnoreDS: p.Args.IgnoreDaemonSetPods}
		for _, r := range p.Args.Rules {
			s.Rules = append(s.Rules, r.Name)
		}
		got = append(got, s)
	}
	want := []summary{
		{SchedulerName: "everywhere", Filter: true, Score: true, Rules: []string{"eu", "spot"}, IgnoreDS: true},
		{SchedulerName: "filter-only", Filter: true, Rules: []string{"eu"}},
		// Defaulted args: no rule.
		{SchedulerName: "no-score", Filter: true, IgnoreDS: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
}

func regionRule(name string, ns ...string) config.PlacementRule {
	return config.PlacementRule{Name: name, Namespaces: ns, Action: config.PlacementRequire,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/region": "eu-west-1"}}}
}

func TestRenderSelection(t *testing.T) {
	spot := config.PlacementRule{Name: "spot", Action: config.PlacementPrefer, Weight: 20,
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"workload": "batch"}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}},
		NodeSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{"capacity-type": "spot"}}}
	everyNode := config.PlacementRule{Name: "anywhere", Namespaces: []string{"a"}, Action: config.PlacementRequire, NodeSelector: &metav1.LabelSelector{}}
	type rendered struct {
		Name, Rule, Profiles string
		NamespaceSelector    *metav1.LabelSelector
		ObjectSelector       *metav1.LabelSelector
		Conditions           []string
	}
	tests := []struct {
		name     string
		profiles []ProfileArgs
		want     []rendered
		skipped  []string
	}{
		{
			name: "one profile: namespaces by name, exclusions, pod and namespace labels",
			profiles: []ProfileArgs{{SchedulerName: "s", Filter: true, Score: true, Args: &config.PlacementPolicyArgs{
				IgnoreDaemonSetPods: true, ExcludedNamespaces: []string{"kube-system", "ops", "kube-system"},
				Rules: []config.PlacementRule{regionRule("eu", "payments", "billing"), spot}}}},
			want: []rendered{
				{Name: "placementpolicy-eu", Rule: "eu", Profiles: "s",
					NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: nameLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"payments", "billing"}},
						{Key: nameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "ops"}}}},
					Conditions: []string{"scheduled-by-a-profile-that-runs-the-rule", "not-a-daemonset-pod"}},
				{Name: "placementpolicy-spot", Rule: "spot", Profiles: "s",
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}, MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: nameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "ops"}}}},
					ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"workload": "batch"}},
					Conditions:     []string{"scheduled-by-a-profile-that-runs-the-rule", "not-a-daemonset-pod"}},
			},
		},
		{
			name: "a profile without Score renders no Prefer rule, one without Filter no Require rule",
			profiles: []ProfileArgs{
				{SchedulerName: "filter", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{spot}}},
				{SchedulerName: "score", Score: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{regionRule("eu", "payments")}}},
			},
		},
		{
			name: "the same rule in two profiles is one policy; the same name meaning two things is two",
			profiles: []ProfileArgs{
				{SchedulerName: "a", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{regionRule("eu", "payments")}}},
				{SchedulerName: "b", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{regionRule("eu", "payments")}}},
				{SchedulerName: "c", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{regionRule("eu", "billing")}}},
			},
			want: []rendered{
				{Name: "placementpolicy-eu-1", Rule: "eu", Profiles: "a,b",
					NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: nameLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"payments"}}}},
					Conditions:        []string{"scheduled-by-a-profile-that-runs-the-rule"}},
				{Name: "placementpolicy-eu-2", Rule: "eu", Profiles: "c",
					NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: nameLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"billing"}}}},
					Conditions:        []string{"scheduled-by-a-profile-that-runs-the-rule"}},
			},
		},
		{
			name: "a nodeSelector that selects every node changes no placement",
			profiles: []ProfileArgs{{SchedulerName: "s", Filter: true, Score: true, Args: &config.PlacementPolicyArgs{
				Rules: []config.PlacementRule{everyNode}}}},
			skipped: []string{"anywhere"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Render(tt.profiles, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []rendered
			for _, p := range res.Policies {
				spec := p.Policy.Spec
				r := rendered{Name: p.Policy.Name, Rule: p.Rule, Profiles: p.Policy.Annotations[ProfilesAnnotation],
					NamespaceSelector: spec.MatchConstraints.NamespaceSelector, ObjectSelector: spec.MatchConstraints.ObjectSelector}
				for _, c := range spec.MatchConditions {
					r.Conditions = append(r.Conditions, c.Name)
				}
				if p.Binding.Spec.PolicyName != p.Policy.Name || p.Binding.Name != p.Policy.Name {
					t.Errorf("binding %s names policy %s, want %s", p.Binding.Name, p.Binding.Spec.PolicyName, p.Policy.Name)
				}
				if p.Policy.Labels[RuleLabel] != p.Rule {
					t.Errorf("policy %s: label %s=%q, want %q", p.Policy.Name, RuleLabel, p.Policy.Labels[RuleLabel], p.Rule)
				}
				if got, want := *spec.FailurePolicy, Ignore; got != want {
					t.Errorf("policy %s: failurePolicy %s, want the default %s", p.Policy.Name, got, want)
				}
				got = append(got, r)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("policies (-want +got):\n%s", diff)
			}
			var skipped []string
			for _, s := range res.Skipped {
				skipped = append(skipped, s.Rule)
			}
			if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
				t.Errorf("skipped rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	ok := []ProfileArgs{{SchedulerName: "s", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{regionRule("eu", "a")}}}}
	bad := []ProfileArgs{{SchedulerName: "s", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{{Name: "x", Namespaces: []string{"a"}, Action: "Avoid"}}}}}
	for _, tt := range []struct {
		name     string
		profiles []ProfileArgs
		opts     Options
		want     string
	}{
		{"unknown failure policy", ok, Options{FailurePolicy: "Sometimes"}, `failure policy "Sometimes": must be Ignore or Fail`},
		{"unknown action", bad, Options{}, `profile "s": rule "x": action "Avoid": must be Require or Prefer`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.profiles, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Render: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRequirements(t *testing.T) {
	got := requirements(&metav1.LabelSelector{
		MatchLabels: map[string]string{"b": "2", "a": "1"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "c", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x", "y"}},
			{Key: "d", Operator: metav1.LabelSelectorOpDoesNotExist},
			{Key: "e", Operator: metav1.LabelSelectorOpExists},
		},
	})
	want := []v1.NodeSelectorRequirement{
		{Key: "a", Operator: v1.NodeSelectorOpIn, Values: []string{"1"}},
		{Key: "b", Operator: v1.NodeSelectorOpIn, Values: []string{"2"}},
		{Key: "c", Operator: v1.NodeSelectorOpNotIn, Values: []string{"x", "y"}},
		{Key: "d", Operator: v1.NodeSelectorOpDoesNotExist},
		{Key: "e", Operator: v1.NodeSelectorOpExists},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
	if got := admissionpolicy.CELRequirements(want[2:4]); got != `[{"key": dyn("c"), "operator": dyn("NotIn"), "values": dyn(["x", "y"])}, {"key": dyn("d"), "operator": dyn("DoesNotExist")}]` {
		t.Errorf("celRequirements = %s", got)
	}
}

func TestCELStringEscapes(t *testing.T) {
	if got, want := admissionpolicy.CELStrings([]string{`a"b`, `c\d`}), `["a\"b", "c\\d"]`; got != want {
		t.Errorf("celStrings = %s, want %s", got, want)
	}
}
