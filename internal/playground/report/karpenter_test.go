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

package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

func withKarpenter(k *KarpenterResult) Result {
	return Result{
		Nodes:     []NodeResult{{Name: "us-system", Pods: 2}},
		Pods:      []PodResult{{Namespace: "payments", Name: "ledger-a", Node: "kwok-eu-1"}, {Namespace: "default", Name: "web-a", Node: "us-system"}},
		Karpenter: k,
	}
}

// TestWriteTextKarpenter: a run with Karpenter shows its nodes among the
// bars and in a table of their NodePool, region, capacity type and
// instance type; one where it added none says so, and names the pool the
// playground made.
func TestWriteTextKarpenter(t *testing.T) {
	for _, tt := range []struct {
		name string
		k    *KarpenterResult
		want string
	}{
		{name: "nodes added", k: &KarpenterResult{NodePools: []string{"region-eu-west-1", "region-us-east-1"}, Nodes: []AddedNode{
			{Name: "kwok-eu-1", NodePool: "region-eu-west-1", Region: "eu-west-1", Zone: "eu-west-1a", CapacityType: "on-demand", InstanceType: "c-4x", Pods: 1}}},
			want: `pods per node:
  us-system  ██ 2
  kwok-eu-1  █ 1
nodes Karpenter added (NodePools: region-eu-west-1, region-us-east-1):
  node       nodepool          region     capacity   instance type  pods
  kwok-eu-1  region-eu-west-1  eu-west-1  on-demand  c-4x           1
pods:
`},
		{name: "none added, default pool", k: &KarpenterResult{NodePools: []string{"default"}, DefaultNodePool: true},
			want: `pods per node:
  us-system  ██ 2
nodes Karpenter added: none (NodePools: default (made by the playground: the scenario has no NodePool))
pods:
`},
		{name: "a node without labels", k: &KarpenterResult{Nodes: []AddedNode{{Name: "n"}}},
			want: `pods per node:
  us-system  ██ 2
  n           0
nodes Karpenter added (NodePools: none):
  node  nodepool  region  capacity  instance type  pods
  n     -         -       -         -              0
pods:
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, withKarpenter(tt.k)); err != nil {
				t.Fatal(err)
			}
			got, _, _ := strings.Cut(b.String(), "  payments/")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKarpenterJSON: without Karpenter the JSON output has no karpenter
// key (the runs without --karpenter print what they did before); with it,
// its nodes and pools are there, as lists even when empty.
func TestKarpenterJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    Result
	}{
		{name: "without", r: withKarpenter(nil)},
		{name: "nothing-added", r: withKarpenter(&KarpenterResult{NodePools: []string{}, Nodes: []AddedNode{}})},
		{name: "a-node", r: withKarpenter(&KarpenterResult{NodePools: []string{"eu"}, Nodes: []AddedNode{{Name: "n", NodePool: "eu", Region: "eu-west-1", CapacityType: "spot", InstanceType: "c-2x", Pods: 3}}})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "karpenter-"+tt.name, resultJSON(tt.r))
		})
	}
}

// TestCompareTextKarpenter: runs with Karpenter compared side by side each
// list their added nodes (which differ by name between runs) under the
// table of the scenario's nodes; before, those nodes were not shown.
func TestCompareTextKarpenter(t *testing.T) {
	runs := []Run{
		{Config: "a.yaml", Result: withKarpenter(&KarpenterResult{NodePools: []string{"eu"}, Nodes: []AddedNode{{Name: "kwok-eu-1", NodePool: "eu", Region: "eu-west-1", Pods: 1}}})},
		{Config: "b.yaml", Result: withKarpenter(&KarpenterResult{NodePools: []string{"eu"}})},
	}
	var b bytes.Buffer
	if err := WriteCompareText(&b, runs); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"[1] nodes Karpenter added (NodePools: eu):\n  node       nodepool  region     capacity  instance type  pods\n  kwok-eu-1  eu        eu-west-1  -         -              1\n",
		"[2] nodes Karpenter added: none (NodePools: eu)\n",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("compare text does not contain %q:\n%s", w, b.String())
		}
	}
}

// TestCountAddedPods: only the bound pods of each added node count.
func TestCountAddedPods(t *testing.T) {
	pod := func(node string) workload.OwnedPod {
		return workload.OwnedPod{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: node}}}
	}
	nodes := []AddedNode{{Name: "a"}, {Name: "b"}}
	CountAddedPods(nodes, []workload.OwnedPod{pod("a"), pod("a"), pod(""), pod("other")})
	if diff := cmp.Diff([]AddedNode{{Name: "a", Pods: 2}, {Name: "b"}}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}
