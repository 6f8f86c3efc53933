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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// writeScenarios writes files (name -> content) into a temp dir and
// returns it.
func writeScenarios(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const baseCluster = `nodes:
- {name: n1, allocatable: {cpu: 2}}
- {name: n2, unschedulable: true}
boundPods:
- {namespace: kube-system, name: proxy-1, nodeName: n1, owner: {apiVersion: apps/v1, kind: DaemonSet, name: proxy}, containers: [{requests: {cpu: 100m}}]}
- {name: web-1, nodeName: n2, labels: {app: web}}
objects:
- {kind: Service, metadata: {name: web}, spec: {selector: {app: web}, ports: [{port: 80}]}}
`

func TestBaseMerge(t *testing.T) {
	dir := writeScenarios(t, map[string]string{
		"snap/cluster.yaml": baseCluster,
		"add.yaml": `base: snap/cluster.yaml
nodes: [{name: extra}]
objects:
- {kind: Deployment, metadata: {name: api}, spec: {replicas: 3, template: {spec: {containers: [{name: c, image: i}]}}}}
- {kind: Pod, metadata: {name: pinned}, spec: {nodeName: n1, containers: [{name: c, image: i}]}}
`,
	})
	p, err := loadPlan(filepath.Join(dir, "add.yaml"), []string{"custom-scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Scenario.Base != "" {
		t.Errorf("Base %q after merging, want none", p.Scenario.Base)
	}
	if diff := cmp.Diff([]string{"n1", "n2", "extra"}, p.NodeNames); diff != "" {
		t.Errorf("nodes, base first (-want +got):\n%s", diff)
	}
	if len(p.BoundPods) != 2 || p.BoundPods[1].Namespace != workload.DefaultNamespace || !p.Scenario.Nodes[1].Unschedulable {
		t.Errorf("bound pods %+v, nodes %+v", p.BoundPods, p.Scenario.Nodes)
	}
	var kinds []string
	for _, o := range p.Objects {
		kinds = append(kinds, o.GetKind())
	}
	if diff := cmp.Diff([]string{"Service", "Deployment", "Pod"}, kinds); diff != "" {
		t.Errorf("objects: want the base's Service, then the Deployment and the Pod (-want +got):\n%s", diff)
	}
	// Absolute paths work too.
	abs := writeScenarios(t, map[string]string{"top.yaml": "base: " + filepath.Join(dir, "snap/cluster.yaml") + "\n"})
	if p, err := loadPlan(filepath.Join(abs, "top.yaml"), nil); err != nil || len(p.NodeNames) != 2 {
		t.Errorf("absolute base: %v, %+v", err, p)
	}
}

func TestBaseErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// want are substrings of the error, with DIR for the directory.
		want []string
	}{
		{
			name:  "missing base",
			files: map[string]string{"top.yaml": "base: nope.yaml\n"},
			want:  []string{"DIR/top.yaml: base: Invalid value: \"nope.yaml\"", "no such file"},
		},
		{
			name: "base with a base",
			files: map[string]string{
				"top.yaml": "base: mid.yaml\n",
				"mid.yaml": "base: top.yaml\nnodes: [{name: a}]\n",
			},
			want: []string{"DIR/mid.yaml: base: Forbidden: DIR/mid.yaml is the base of DIR/top.yaml: a base may not have a base itself"},
		},
		{
			name: "base that does not decode",
			files: map[string]string{
				"top.yaml":  "base: base.yaml\n",
				"base.yaml": "nodes: [{name: a, bogus: 1}]\n",
			},
			want: []string{"DIR/base.yaml: ", `unknown field "nodes[0].bogus"`},
		},
		{
			name: "errors in each file, with their own indexes",
			files: map[string]string{
				"base.yaml": "nodes: [{name: a}, {name: b, allocatable: {cpu: lots}}]\n" +
					"boundPods: [{name: p, nodeName: a}, {name: q, nodeName: zz}]\n",
				"top.yaml": "base: base.yaml\n" +
					"nodes: [{name: c}, {name: a}]\n" +
					"boundPods: [{name: p, nodeName: b}]\n" +
					"objects: [{kind: Pod, metadata: {name: x}, spec: {nodeName: nowhere, containers: [{name: c, image: i}]}}]\n",
			},
			want: []string{
				"DIR/base.yaml: nodes[1].allocatable.cpu: Invalid value: \"lots\"",
				"DIR/base.yaml: boundPods[1].nodeName: Not found: \"zz\"",
				"DIR/top.yaml: nodes[1].name: Duplicate value",
				"DIR/top.yaml: boundPods[0].name: Duplicate value: \"default/p (also boundPods[0])\"",
				"DIR/top.yaml: objects[0].spec.nodeName: Not found: \"nowhere\"",
			},
		},
		{
			name: "totals name the top file",
			files: map[string]string{
				"base.yaml": "nodes: [{name: a, count: 6000}]\n",
				"top.yaml":  "base: base.yaml\nnodes: [{name: b, count: 5000}]\n",
			},
			want: []string{"DIR/top.yaml: nodes: Invalid value: 11000: nodes in total"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeScenarios(t, tt.files)
			_, err := loadPlan(filepath.Join(dir, "top.yaml"), nil)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "DIR", dir); !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

// TestBaseValidationErrorType: the errors stay *ValidationError, one per
// file, base first.
func TestBaseValidationErrorType(t *testing.T) {
	dir := writeScenarios(t, map[string]string{
		"base.yaml": "nodes: [{name: A}]\n",
		"top.yaml":  "base: base.yaml\nnodes: [{name: B}]\n",
	})
	_, err := loadPlan(filepath.Join(dir, "top.yaml"), nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.File != filepath.Join(dir, "base.yaml") {
		t.Fatalf("error %v: want a *ValidationError of the base first", err)
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], filepath.Join(dir, "top.yaml")+": nodes[0].name") {
		t.Errorf("error lines %q", lines)
	}
}
