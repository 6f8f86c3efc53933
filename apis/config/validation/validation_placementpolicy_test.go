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

package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// validPolicy returns valid internal args with one rule of each action for
// the tests to break.
func validPolicy() *config.PlacementPolicyArgs {
	return &config.PlacementPolicyArgs{
		Rules: []config.PlacementRule{
			{
				Name:              "eu-data-residency",
				Namespaces:        []string{"payments"},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"data-residency": "eu"}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}},
				NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "topology.kubernetes.io/region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu-west-1"}},
				}},
				Action: config.PlacementRequire,
			},
			{
				Name:         "batch-prefers-spot",
				PodSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"workload": "batch"}},
				NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"karpenter.sh/capacity-type": "spot"}},
				Action:       config.PlacementPrefer,
				Weight:       10,
			},
		},
		IgnoreDaemonSetPods: true,
		ExcludedNamespaces:  []string{"kube-system"},
	}
}

func TestValidatePlacementPolicyArgs(t *testing.T) {
	rule0 := "profiles[0].pluginConfig[0].args.rules[0]"
	rule1 := "profiles[0].pluginConfig[0].args.rules[1]"
	tests := []struct {
		name     string
		edit     func(*config.PlacementPolicyArgs)
		wantErrs field.ErrorList
	}{
		{name: "valid", edit: func(*config.PlacementPolicyArgs) {}},
		{name: "no rules is valid", edit: func(a *config.PlacementPolicyArgs) { a.Rules = nil }},
		{
			name:     "missing name",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].Name = "" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: rule0 + ".name", BadValue: ""}},
		},
		{
			name:     "name is not a DNS-1123 label",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].Name = "EU_residency" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: rule0 + ".name", BadValue: "EU_residency"}},
		},
		{
			name:     "duplicate name",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[1].Name = a.Rules[0].Name },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeDuplicate, Field: rule1 + ".name", BadValue: "eu-data-residency"}},
		},
		{
			name: "no pod selection",
			edit: func(a *config.PlacementPolicyArgs) {
				a.Rules[0].Namespaces, a.Rules[0].NamespaceSelector, a.Rules[0].PodSelector = nil, nil, nil
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: rule0, BadValue: ""}},
		},
		{
			name:     "namespaces alone select pods",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].NamespaceSelector, a.Rules[0].PodSelector = nil, nil },
			wantErrs: nil,
		},
		{
			name:     "invalid namespace",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].Namespaces = []string{"Payments"} },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: rule0 + ".namespaces[0]", BadValue: "Payments"}},
		},
		{
			name: "invalid namespaceSelector",
			edit: func(a *config.PlacementPolicyArgs) {
				a.Rules[0].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Near"}}}
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: rule0 + ".namespaceSelector.matchExpressions[0].operator", BadValue: metav1.LabelSelectorOperator("Near")}},
		},
		{
			name: "invalid podSelector",
			edit: func(a *config.PlacementPolicyArgs) {
				a.Rules[1].PodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: rule1 + ".podSelector.matchLabels", BadValue: "bad key!", Origin: "format=k8s-label-key"}},
		},
		{
			name:     "missing nodeSelector",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].NodeSelector = nil },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: rule0 + ".nodeSelector", BadValue: ""}},
		},
		{
			name: "invalid nodeSelector",
			edit: func(a *config.PlacementPolicyArgs) {
				a.Rules[0].NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "topology.kubernetes.io/region", Operator: metav1.LabelSelectorOpIn},
				}}
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: rule0 + ".nodeSelector.matchExpressions[0].values", BadValue: ""}},
		},
		{
			name:     "missing action",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].Action = "" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: rule0 + ".action", BadValue: ""}},
		},
		{
			name:     "unknown action",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].Action = "Forbid" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeNotSupported, Field: rule0 + ".action", BadValue: config.PlacementAction("Forbid")}},
		},
		{
			name:     "weight on a Require rule",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[0].Weight = 5 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeForbidden, Field: rule0 + ".weight", BadValue: ""}},
		},
		{
			name:     "weight below range",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[1].Weight = 0 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: rule1 + ".weight", BadValue: int32(0)}},
		},
		{
			name:     "weight above range",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[1].Weight = 101 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: rule1 + ".weight", BadValue: int32(101)}},
		},
		{
			name:     "weight at the bounds",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[1].Weight = 100 },
			wantErrs: nil,
		},
		{
			// Guards the lower bound, its comparison (< 1, not <= 1) and its
			// constant (1, as the message says): weight 1 is the default a
			// Prefer rule gets and must stay valid.
			name:     "weight at the lower bound",
			edit:     func(a *config.PlacementPolicyArgs) { a.Rules[1].Weight = 1 },
			wantErrs: nil,
		},
		{
			name:     "duplicate excluded namespace",
			edit:     func(a *config.PlacementPolicyArgs) { a.ExcludedNamespaces = []string{"kube-system", "kube-system"} },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.excludedNamespaces[1]", BadValue: "kube-system"}},
		},
		{
			name: "every problem is reported",
			edit: func(a *config.PlacementPolicyArgs) {
				a.Rules[0].Name = ""
				a.Rules[0].NodeSelector = nil
				a.Rules[1].Weight = 0
			},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeRequired, Field: rule0 + ".name", BadValue: ""},
				{Type: field.ErrorTypeRequired, Field: rule0 + ".nodeSelector", BadValue: ""},
				{Type: field.ErrorTypeInvalid, Field: rule1 + ".weight", BadValue: int32(0)},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := validPolicy()
			tc.edit(args)
			before := args.DeepCopy()
			err := ValidatePlacementPolicyArgs(argsPath, args)
			if diff := cmp.Diff(tc.wantErrs, fieldErrors(t, err), cmpopts.IgnoreFields(field.Error{}, "Detail")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, args); diff != "" {
				t.Errorf("validation changed the args (-before +after):\n%s", diff)
			}
		})
	}
}

// TestValidatePlacementPolicyArgsMessages checks what an operator reads: the
// field path and what is allowed.
func TestValidatePlacementPolicyArgsMessages(t *testing.T) {
	args := validPolicy()
	args.Rules[0].Action = "Forbid"
	args.Rules[1].Weight = 500
	err := ValidatePlacementPolicyArgs(argsPath, args)
	if err == nil {
		t.Fatal("got no error")
	}
	for _, want := range []string{
		`profiles[0].pluginConfig[0].args.rules[0].action: Unsupported value: "Forbid": supported values: "Require", "Prefer"`,
		`profiles[0].pluginConfig[0].args.rules[1].weight: Invalid value: 500: must be in the range 1-100`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}
