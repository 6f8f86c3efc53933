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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAddNodesAndDeschedule: addNodes specs are checked as the scenario's
// nodes are, their names must be new, later steps and assertions may name
// them, and a deschedule step has 1 to MaxDescheduleCycles cycles.
func TestAddNodesAndDeschedule(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{name: "valid", data: node + "steps:\n- addNodes: [{name: b, count: 2}]\n- deleteNodes: {names: [b-1]}\n- deschedule: {cycles: 3}\n" +
			"expect: [{nodes: {names: [b-2]}}]"},
		{name: "name of a scenario node", data: node + "steps: [{addNodes: [{name: a}]}]", want: []string{"steps[0].addNodes[0].name: Duplicate value", `also made by nodes`}},
		{name: "name of an earlier step's node", data: node + "steps: [{addNodes: [{name: b}]}, {addNodes: [{name: b}]}]",
			want: []string{"steps[1].addNodes[0].name: Duplicate value", "also made by steps[0].addNodes[0]"}},
		{name: "bad spec", data: node + "steps: [{addNodes: [{name: b, count: 0, allocatable: {pods: -1}}]}]",
			want: []string{"steps[0].addNodes[0].count: Invalid value: 0", "steps[0].addNodes[0].allocatable.pods", "must not be negative"}},
		{name: "empty addNodes", data: node + "steps: [{addNodes: []}]", want: []string{"steps[0].addNodes: Required value"}},
		{name: "deleteNodes of a node no step adds", data: node + "steps: [{addNodes: [{name: b}]}, {deleteNodes: {names: [c]}}]",
			want: []string{"steps[1].deleteNodes.names[0]: Not found"}},
		{name: "zero cycles", data: node + "steps: [{deschedule: {cycles: 0}}]", want: []string{"steps[0].deschedule.cycles: Invalid value: 0: must be at least 1 and at most 100"}},
		{name: "too many cycles", data: node + "steps: [{deschedule: {cycles: 101}}]", want: []string{"steps[0].deschedule.cycles: Invalid value: 101"}},
		{name: "two things", data: node + "steps: [{deschedule: {cycles: 1}, addNodes: [{name: b}]}]", want: []string{"exactly one of scale, delete, deleteNodes, wait, licenses, addNodes, deschedule"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

// TestAddNodesPlan: the steps print as their progress lines, and their
// nodes are made as the scenario's, hostname label and all.
func TestAddNodesPlan(t *testing.T) {
	f, err := Decode("s.yaml", []byte(node+"descheduler: p.yaml\nsteps:\n- addNodes: [{name: b, count: 2, labels: {zone: z}, allocatable: {pods: 4}}]\n- deschedule: {cycles: 1}\n- deschedule: {cycles: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range p.Steps {
		got = append(got, st.String())
	}
	if diff := cmp.Diff([]string{"add nodes b-1, b-2", "deschedule 1 cycle", "deschedule 2 cycles"}, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if !f.Scenario.Deschedules() || f.Scenario.Descheduler != "p.yaml" {
		t.Errorf("Deschedules() = %v, Descheduler = %q: want true, p.yaml", f.Scenario.Deschedules(), f.Scenario.Descheduler)
	}
	nodes := NodeObjects(p.Steps[0].AddNodes, time.Unix(0, 0))
	if len(nodes) != 2 || nodes[1].Name != "b-2" || nodes[1].Labels["zone"] != "z" || nodes[1].Labels["kubernetes.io/hostname"] != "b-2" ||
		nodes[1].Status.Allocatable.Pods().Value() != 4 {
		t.Errorf("nodes of addNodes: %+v", nodes)
	}
	if diff := cmp.Diff([]string{"a"}, p.NodeNames); diff != "" {
		t.Errorf("NodeNames are the scenario's nodes only (-want +got):\n%s", diff)
	}
}
