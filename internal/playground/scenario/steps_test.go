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
	"strings"
	"testing"
)

// TestStepErrors: each step is one thing on an object of the scenario, and
// every error names its field.
func TestStepErrors(t *testing.T) {
	const head = `
nodes: [{name: a}]
objects:
  - kind: Deployment
    metadata: {name: web}
    spec: {template: {spec: {containers: [{name: c, image: i}]}}}
steps:
`
	tests := []struct{ steps, want string }{
		{"  - {scale: {kind: Deployment, name: web, replicas: 2}, wait: 1s}", "steps[0]: Invalid value: 2: a step has exactly one of scale, delete, deleteNodes, wait"},
		{"  - deleteNodes: {}", "steps[0].deleteNodes: Required value: names or labels of the nodes to delete: an empty selector would delete every node"},
		{"  - deleteNodes: {names: [b]}", `steps[0].deleteNodes.names[0]: Not found: "b"`},
		{"  - deleteNodes: {matchLabels: {'a b': c}}", "steps[0].deleteNodes.matchLabels: Invalid value"},
		{"  - {}", "steps[0]: Invalid value: 0: a step has exactly one of"},
		{"  - scale: {kind: Deployment, name: api, replicas: 2}", `steps[0].scale.name: Not found: "Deployment default/api is not an object of the scenario"`},
		{"  - scale: {kind: DaemonSet, name: web, replicas: 2}", `steps[0].scale.kind: Unsupported value: "DaemonSet"`},
		{"  - scale: {kind: Deployment, name: web}", "steps[0].scale.replicas: Required value"},
		{"  - scale: {kind: Deployment, name: web, replicas: -1}", "steps[0].scale.replicas: Invalid value: -1"},
		{"  - delete: {kind: Deployment, name: web, namespace: other}", `steps[0].delete.name: Not found: "Deployment other/web`},
		{"  - wait: 0s", "steps[0].wait: Invalid value: \"0s\": must be positive"},
		{"  - wait: 2h", "steps[0].wait: Invalid value: \"2h0m0s\""},
		{"  - {create: {kind: Pod}}", `unknown field "steps[0].create"`},
	}
	for _, tt := range tests {
		_, err := decodePlan("s.yaml", []byte(head+tt.steps+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.steps, err, tt.want)
		}
	}
	s, err := decodePlan("s.yaml", []byte(head+"  - scale: {kind: Deployment, name: web, replicas: 3}\n  - delete: {kind: Deployment, name: web}\n  - wait: 1s\n  - deleteNodes: {names: [a], matchLabels: {spot: \"true\"}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Steps {
		got = append(got, st.String())
	}
	if want := "scale Deployment default/web to 3, delete Deployment default/web, wait 1s, delete nodes a with spot=true"; strings.Join(got, ", ") != want {
		t.Errorf("steps %q, want %q", strings.Join(got, ", "), want)
	}
}
