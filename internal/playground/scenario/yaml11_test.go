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
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminsched/scheduler-plugins/internal/yaml11"
)

const yamlPod = "{kind: Pod, metadata: {name: p}, spec: {nodeSelector: {gpu: %s}, containers: [{name: c, image: i}]}}"

func TestDecodeYAML11Booleans(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{name: "node name n", data: "nodes: [{name: n}]", want: []string{
			`s.yaml: nodes[0].name: Invalid value: "n": this unquoted value is a YAML 1.1 boolean (false) to the decoder; quote it ("n") if a string is meant, or write false if a boolean is`}},
		{name: "label yes", data: "nodes: [{name: a, labels: {gpu: yes}}]", want: []string{`nodes[0].labels.gpu: Invalid value: "yes"`, `quote it ("yes")`}},
		{name: "block style label On", data: "nodes:\n- name: a\n  labels:\n    gpu: On\n", want: []string{`nodes[0].labels.gpu: Invalid value: "On"`, "(true)"}},
		{name: "key", data: "nodes: [{name: a, labels: {off: x}}]", want: []string{`nodes[0].labels: Invalid value: "off": this unquoted key is a YAML 1.1 boolean (false)`}},
		{name: "object field", data: node + "objects: [" + fmt.Sprintf(yamlPod, "Y") + "]", want: []string{`objects[0].spec.nodeSelector.gpu: Invalid value: "Y"`}},
		{name: "in a list", data: "nodes: [{name: a, taints: [{key: k, value: NO, effect: NoSchedule}]}]", want: []string{`nodes[0].taints[0].value: Invalid value: "NO"`}},
		{name: "boolean field too", data: "nodes: [{name: a, unschedulable: yes}]", want: []string{`nodes[0].unschedulable: Invalid value: "yes"`, "or write true if a boolean is"}},
		{name: "every word reported", data: "nodes: [{name: n}, {name: y}]", want: []string{"nodes[0].name", "nodes[1].name"}},
		{name: "double quoted", data: `nodes: [{name: "n", labels: {gpu: "yes"}}]`},
		{name: "single quoted", data: `nodes: [{name: 'n', labels: {gpu: 'on'}}]`},
		{name: "explicit tag", data: `nodes: [{name: !!str n}]`},
		{name: "true and false are booleans", data: "nodes: [{name: a, unschedulable: true}, {name: b, unschedulable: false}]"},
		{name: "other words", data: "nodes: [{name: a, labels: {gpu: nvidia, x: yess, z: nO}}]"},
		{name: "matching pod", data: "nodes: [{name: a, labels: {gpu: \"yes\"}}]\nobjects: [" + fmt.Sprintf(yamlPod, `"yes"`) + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

func TestBaseYAML11Booleans(t *testing.T) {
	dir := writeScenarios(t, map[string]string{
		"base.yaml": "nodes: [{name: a, labels: {spot: yes}}]\n",
		"s.yaml":    "base: base.yaml\nnodes: [{name: b}]\n",
	})
	_, err := loadPlan(filepath.Join(dir, "s.yaml"), nil)
	want := filepath.Join(dir, "base.yaml") + `: nodes[0].labels.spot: Invalid value: "yes"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
}

// TestYAML11BooleanWords checks the refused words against the decoder
// itself: each one, unquoted, becomes a boolean there; close variants stay
// strings, as they do in YAML 1.2.
// snapshotLikeScenario is n nodes and 10 bound pods per node, written by
// WriteSnapshot as `playground snapshot` writes them.
func snapshotLikeScenario(b *testing.B, n int) []byte {
	s := &Scenario{}
	for i := range n {
		s.Nodes = append(s.Nodes, NodeSpec{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{
			"topology.kubernetes.io/zone": "eu-west-1a", "karpenter.sh/capacity-type": "on-demand"}})
		for j := range 10 {
			s.BoundPods = append(s.BoundPods, BoundPod{Name: fmt.Sprintf("web-%d-%d", i, j), NodeName: s.Nodes[i].Name,
				Labels: map[string]string{"app": "web"}, Owner: &Owner{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web"}})
		}
	}
	var buf strings.Builder
	if err := Write(&buf, s, nil); err != nil {
		b.Fatal(err)
	}
	return []byte(buf.String())
}

// BenchmarkCheckYAML11Booleans compares the check on a snapshot (no
// ambiguous word: its pre-check answers) with the decoding that runs anyway;
// internal/yaml11's BenchmarkCheck compares the pre-check with the walk.
func BenchmarkCheckYAML11Booleans(b *testing.B) {
	data := snapshotLikeScenario(b, 500)
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if errs := yaml11.Check(data); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var s Scenario
			if err := unmarshalStrict(data, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
