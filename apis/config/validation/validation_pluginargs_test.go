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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// argsPath is where the args of the first plugin of the first profile live in
// a KubeSchedulerConfiguration; every expected path below is rooted there.
var argsPath = field.NewPath("profiles").Index(0).Child("pluginConfig").Index(0).Child("args")

// validArgs returns fully set, valid internal args for the tests to break.
func validArgs() *config.NodeLessPodsArgs {
	return &config.NodeLessPodsArgs{
		Mode: config.NodeLessPodsMostPods,
		PodSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"app": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable"}},
				{Key: "example.com/batch", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		},
		Namespaces:          []string{"team-a", "team-b"},
		IgnoreDaemonSetPods: false,
		RelativeToCapacity:  true,
	}
}

// fieldErrors returns the *field.Error values behind the aggregate that
// ValidateNodeLessPodsArgs returns, in order.
func fieldErrors(t *testing.T, err error) field.ErrorList {
	t.Helper()
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		t.Fatalf("got error of type %T, want an aggregate: %v", err, err)
	}
	var list field.ErrorList
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) {
			t.Fatalf("aggregate holds %T, want *field.Error: %v", e, e)
		}
		list = append(list, fe)
	}
	return list
}

func TestValidateNodeLessPodsArgs(t *testing.T) {
	tests := []struct {
		name     string
		path     *field.Path
		args     *config.NodeLessPodsArgs
		wantErrs field.ErrorList
	}{
		{
			name: "defaults are valid",
			path: argsPath,
			args: &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, IgnoreDaemonSetPods: true},
		},
		{
			name: "fully set args are valid",
			path: argsPath,
			args: validArgs(),
		},
		{
			name: "empty selector and empty namespaces are valid",
			path: argsPath,
			args: &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, PodSelector: &metav1.LabelSelector{}, Namespaces: []string{}},
		},
		{
			name: "unknown mode",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.Mode = "Fewest"
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeNotSupported, Field: "profiles[0].pluginConfig[0].args.mode", BadValue: config.NodeLessPodsMode("Fewest")},
			},
		},
		{
			name: "mode is case sensitive",
			path: argsPath,
			args: &config.NodeLessPodsArgs{Mode: "leastpods"},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeNotSupported, Field: "profiles[0].pluginConfig[0].args.mode", BadValue: config.NodeLessPodsMode("leastpods")},
			},
		},
		{
			// The internal type has no default: the loader defaults the v1
			// args before it converts them.
			name: "empty mode",
			path: argsPath,
			args: &config.NodeLessPodsArgs{},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeNotSupported, Field: "profiles[0].pluginConfig[0].args.mode", BadValue: config.NodeLessPodsMode("")},
			},
		},
		{
			name: "selector with an unknown operator",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.PodSelector.MatchExpressions[1].Operator = "Equals"
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[1].operator", BadValue: metav1.LabelSelectorOperator("Equals")},
			},
		},
		{
			name: "selector with a bad label key in matchLabels",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.PodSelector.MatchLabels = map[string]string{"-bad": "web"}
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.podSelector.matchLabels", BadValue: "-bad", Origin: "format=k8s-label-key"},
			},
		},
		{
			name: "selector with a bad label key in matchExpressions",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.PodSelector.MatchExpressions[0].Key = "bad key"
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[0].key", BadValue: "bad key", Origin: "format=k8s-label-key"},
			},
		},
		{
			name: "selector with In and no values",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.PodSelector.MatchExpressions[0].Values = nil
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeRequired, Field: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[0].values", BadValue: ""},
			},
		},
		{
			name: "selector with Exists and values",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.PodSelector.MatchExpressions[1].Values = []string{"x"}
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeForbidden, Field: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[1].values", BadValue: ""},
			},
		},
		{
			name: "invalid namespace name",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.Namespaces = []string{"team-a", "Bad_NS"}
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.namespaces[1]", BadValue: "Bad_NS"},
			},
		},
		{
			name: "empty namespace name",
			path: argsPath,
			args: &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, Namespaces: []string{""}},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.namespaces[0]", BadValue: ""},
			},
		},
		{
			name: "duplicate namespace",
			path: argsPath,
			args: func() *config.NodeLessPodsArgs {
				a := validArgs()
				a.Namespaces = []string{"team-a", "team-a"}
				return a
			}(),
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.namespaces[1]", BadValue: "team-a"},
			},
		},
		{
			name: "duplicate namespace reported at each repeat",
			path: argsPath,
			args: &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, Namespaces: []string{"a", "b", "a", "b", "a"}},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.namespaces[2]", BadValue: "a"},
				{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.namespaces[3]", BadValue: "b"},
				{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.namespaces[4]", BadValue: "a"},
			},
		},
		{
			name: "several errors at once, in field order",
			path: argsPath,
			args: &config.NodeLessPodsArgs{
				Mode: "Fewest",
				PodSelector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "a", Operator: "Equals", Values: []string{"x"}},
						{Key: "b", Operator: metav1.LabelSelectorOpNotIn},
					},
				},
				Namespaces: []string{"Bad_NS", "Bad_NS", "ok", "ok"},
			},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeNotSupported, Field: "profiles[0].pluginConfig[0].args.mode", BadValue: config.NodeLessPodsMode("Fewest")},
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[0].operator", BadValue: metav1.LabelSelectorOperator("Equals")},
				{Type: field.ErrorTypeRequired, Field: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[1].values", BadValue: ""},
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.namespaces[0]", BadValue: "Bad_NS"},
				{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.namespaces[1]", BadValue: "Bad_NS"},
				{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.namespaces[1]", BadValue: "Bad_NS"},
				{Type: field.ErrorTypeDuplicate, Field: "profiles[0].pluginConfig[0].args.namespaces[3]", BadValue: "ok"},
			},
		},
		{
			// NodeLessPods' New validates with a nil path.
			name: "nil path roots the fields at the args",
			path: nil,
			args: &config.NodeLessPodsArgs{Mode: "Fewest", Namespaces: []string{"a", "a"}},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeNotSupported, Field: "mode", BadValue: config.NodeLessPodsMode("Fewest")},
				{Type: field.ErrorTypeDuplicate, Field: "namespaces[1]", BadValue: "a"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.args.DeepCopy()
			err := ValidateNodeLessPodsArgs(tc.path, tc.args)
			if len(tc.wantErrs) == 0 && err != nil {
				t.Fatalf("ValidateNodeLessPodsArgs: unexpected error: %v", err)
			}
			if len(tc.wantErrs) > 0 && err == nil {
				t.Fatalf("ValidateNodeLessPodsArgs: got no error, want %v", tc.wantErrs.ToAggregate())
			}
			// Details are the texts of the apimachinery helpers; messages
			// that matter are checked in TestValidateNodeLessPodsArgsMessages.
			if diff := cmp.Diff(tc.wantErrs, fieldErrors(t, err), cmpopts.IgnoreFields(field.Error{}, "Detail")); diff != "" {
				t.Errorf("ValidateNodeLessPodsArgs errors (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.args); diff != "" {
				t.Errorf("ValidateNodeLessPodsArgs changed its args (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestValidateNodeLessPodsArgsMessages checks the exact text users read.
func TestValidateNodeLessPodsArgsMessages(t *testing.T) {
	tests := []struct {
		name    string
		path    *field.Path
		args    *config.NodeLessPodsArgs
		wantErr string
	}{
		{
			name:    "unknown mode lists the supported values",
			path:    argsPath,
			args:    &config.NodeLessPodsArgs{Mode: "Fewest"},
			wantErr: `profiles[0].pluginConfig[0].args.mode: Unsupported value: "Fewest": supported values: "LeastPods", "MostPods"`,
		},
		{
			name:    "duplicate namespace",
			path:    argsPath,
			args:    &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, Namespaces: []string{"x", "x"}},
			wantErr: `profiles[0].pluginConfig[0].args.namespaces[1]: Duplicate value: "x"`,
		},
		{
			name:    "In without values",
			path:    argsPath,
			args:    &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn}}}},
			wantErr: "profiles[0].pluginConfig[0].args.podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
		},
		{
			name:    "unknown operator",
			path:    argsPath,
			args:    &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Equals"}}}},
			wantErr: `profiles[0].pluginConfig[0].args.podSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator`,
		},
		{
			name:    "two errors are joined in a list",
			path:    nil,
			args:    &config.NodeLessPodsArgs{Mode: "", Namespaces: []string{"x", "x"}},
			wantErr: `[mode: Unsupported value: "": supported values: "LeastPods", "MostPods", namespaces[1]: Duplicate value: "x"]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateNodeLessPodsArgs(tc.path, tc.args)
			if err == nil {
				t.Fatalf("ValidateNodeLessPodsArgs: got no error, want %q", tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error message (-want, +got):\n%s", diff)
			}
		})
	}
}
