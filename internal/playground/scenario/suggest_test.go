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

package scenario

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnknownFieldSuggestion: an unknown field of a scenario, or of an
// object of the kind table, names the field meant with its whole path;
// each of an object's unknown fields is one line with the file.
func TestUnknownFieldSuggestion(t *testing.T) {
	deployment := func(body string) string {
		return node + "objects:\n- kind: Deployment\n  apiVersion: apps/v1\n  metadata: {name: d}\n" + body
	}
	tests := []struct {
		name, data string
		want       []string
	}{
		{"top level", node + "expct: []\n", []string{`s.yaml: unknown field "expct"; did you mean "expect"?`}},
		{"a letter missing", deployment("  spec: {replica: 3}\n"),
			[]string{`s.yaml: objects[0]: Invalid value: "Deployment": unknown field "spec.replica"; did you mean "spec.replicas"?`}},
		{"one level down", "nodes: [{name: a, cpu: 4}]\n", []string{`s.yaml: unknown field "nodes[0].cpu"; did you mean "nodes[0].allocatable.cpu"?`}},
		{"one level down in an object", deployment("  replicas: 3\n"),
			[]string{`s.yaml: objects[0]: Invalid value: "Deployment": unknown field "replicas"; did you mean "spec.replicas"?`}},
		{"through lists, every field of an object", deployment("  spec:\n    template:\n      metadata: {namespce: x}\n      spec:\n        containers: [{name: c, image: i, resources: {request: {cpu: 1}}}]\n"),
			[]string{
				`s.yaml: objects[0]: Invalid value: "Deployment": unknown field "spec.template.metadata.namespce"; did you mean "spec.template.metadata.namespace"?`,
				`s.yaml: objects[0]: Invalid value: "Deployment": unknown field "spec.template.spec.containers[0].resources.request"; did you mean "spec.template.spec.containers[0].resources.requests"?`,
			}},
		{"inline TypeMeta", deployment("  kindd: Deployment\n"),
			[]string{`s.yaml: objects[0]: Invalid value: "Deployment": unknown field "kindd"; did you mean "kind"?`}},
		{"nothing close", "nodes: [{name: a, zzzzzzzz: 1}]\n", []string{`s.yaml: unknown field "nodes[0].zzzzzzzz"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePlan("s.yaml", []byte(tc.data), nil)
			if err == nil {
				t.Fatal("no error")
			}
			var got []string
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.Contains(line, "unknown field") {
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unknown field lines (-want +got):\n%s\nerror:\n%v", diff, err)
			}
		})
	}
}

// TestMeantFieldThroughMaps: a map's key is one element of the path.
func TestMeantFieldThroughMaps(t *testing.T) {
	type leaf struct {
		Weight int `json:"weight"`
	}
	type root struct {
		Items map[string][]leaf `json:"items"`
		Skip  string            `json:"-"`
	}
	for path, want := range map[string]string{
		"items.a[0].wieght": "items.a[0].weight",
		"items.a.wieght":    "", // a list, not a struct
		"itmes.a[0].weight": "", // only the last element is looked for
		"skip":              "", // not a JSON field
	} {
		if got := meantField(reflect.TypeOf(root{}), path); got != want {
			t.Errorf("meantField(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestInvalid: one problem stays on the line of "invalid scenario:"; several
// are counted and indented under it.
func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New(`s.yaml: unknown field "x"`), `invalid scenario: s.yaml: unknown field "x"`},
		{errors.Join(errors.New("s.yaml: a"), errors.New("s.yaml: b")), "invalid scenario (2 problems):\n  s.yaml: a\n  s.yaml: b"},
	} {
		err := Invalid(tc.err)
		if got := err.Error(); got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("Invalid(%v) does not wrap it", tc.err)
		}
	}
}
