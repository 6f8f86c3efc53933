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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestNamespaceNamesAreDNSLabels guards the namespace check of every field
// that lists namespaces: a namespace name is a DNS-1123 label (lower case
// alphanumerics and '-', starting and ending with an alphanumeric, at most 63
// characters). A weaker check (a DNS-1123 subdomain, a regexp without its
// anchors) lets through a name no namespace can have, so the rule or count
// silently matches nothing. Mutation testing found "team-" accepted once.
func TestNamespaceNamesAreDNSLabels(t *testing.T) {
	names := []struct {
		name  string
		ns    string
		valid bool
	}{
		{name: "ordinary", ns: "team-a", valid: true},
		{name: "one character", ns: "a", valid: true},
		{name: "digits only", ns: "123", valid: true},
		{name: "63 characters", ns: strings.Repeat("a", 63), valid: true},
		{name: "trailing dash", ns: "team-"},
		{name: "leading dash", ns: "-team"},
		{name: "only a dash", ns: "-"},
		{name: "dot (a subdomain, not a label)", ns: "team.a"},
		{name: "upper case", ns: "Team-a"},
		{name: "underscore", ns: "team_a"},
		{name: "64 characters", ns: strings.Repeat("a", 64)},
		{name: "space", ns: "team a"},
	}
	// Each field that lists namespaces, with the args that put ns at index 1
	// after a valid name, and the path it is reported at.
	fields := []struct {
		name     string
		validate func(ns string) error
		path     string
	}{
		{
			name: "NodeLessPods namespaces",
			validate: func(ns string) error {
				return ValidateNodeLessPodsArgs(argsPath, &config.NodeLessPodsArgs{
					Mode: config.NodeLessPodsLeastPods, Namespaces: []string{"ok", ns}})
			},
			path: "profiles[0].pluginConfig[0].args.namespaces[1]",
		},
		{
			name: "PlacementPolicy excludedNamespaces",
			validate: func(ns string) error {
				a := validPolicy()
				a.ExcludedNamespaces = []string{"ok", ns}
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			path: "profiles[0].pluginConfig[0].args.excludedNamespaces[1]",
		},
		{
			name: "PlacementPolicy rules[].namespaces",
			validate: func(ns string) error {
				a := validPolicy()
				a.Rules[1].Namespaces = []string{"ok", ns}
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			path: "profiles[0].pluginConfig[0].args.rules[1].namespaces[1]",
		},
	}
	for _, f := range fields {
		for _, n := range names {
			t.Run(f.name+"/"+n.name, func(t *testing.T) {
				var want field.ErrorList
				if !n.valid {
					want = field.ErrorList{{Type: field.ErrorTypeInvalid, Field: f.path, BadValue: n.ns}}
				}
				got := fieldErrors(t, f.validate(n.ns))
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(field.Error{}, "Detail")); diff != "" {
					t.Errorf("errors for namespace %q (-want, +got):\n%s", n.ns, diff)
				}
			})
		}
	}
}

// TestNamespaceNameMessage checks the text a user reads for a namespace with a
// trailing dash: the field path, the value and what is allowed.
func TestNamespaceNameMessage(t *testing.T) {
	err := ValidateNodeLessPodsArgs(argsPath, &config.NodeLessPodsArgs{
		Mode: config.NodeLessPodsLeastPods, Namespaces: []string{"team-"}})
	if err == nil {
		t.Fatal(`ValidateNodeLessPodsArgs accepted namespace "team-"`)
	}
	want := `profiles[0].pluginConfig[0].args.namespaces[0]: Invalid value: "team-": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error message (-want, +got):\n%s", diff)
	}
}
