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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

func TestExplainFilters(t *testing.T) {
	nodes := []string{"n3", "n1", "n2"}
	narrowed := FilterGroup{Stage: "PreFilter", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable",
		Reason: "not among the nodes the PreFilter result allows"}
	tests := []struct {
		name string
		a    schedtrace.Attempt
		want filterResult
	}{{
		name: "nothing recorded: every node unseen",
		want: filterResult{unseen: nodes},
	}, {
		name: "nodes in scenario order, nodes not in the scenario after them by name",
		a: schedtrace.Attempt{Filter: map[string]*schedtrace.Status{
			"n1": unsched("F", "r"), "zz": unsched("F", "r"), "n3": unsched("F", "r"), "aa": unsched("F", "r"), "n2": nil,
		}},
		want: filterResult{feasible: 1, groups: []FilterGroup{
			{Stage: "Filter", Plugin: "F", Code: "Unschedulable", Reason: "r", Nodes: []string{"n3", "n1", "aa", "zz"}},
		}},
	}, {
		name: "largest group first, then by stage, plugin and reason",
		a: schedtrace.Attempt{Filter: map[string]*schedtrace.Status{
			"n1": unsched("B", "r"), "n2": unsched("A", "r"), "n3": unsched("B", "r"), "x": unsched("A", "q"),
		}},
		want: filterResult{groups: []FilterGroup{
			{Stage: "Filter", Plugin: "B", Code: "Unschedulable", Reason: "r", Nodes: []string{"n3", "n1"}},
			{Stage: "Filter", Plugin: "A", Code: "Unschedulable", Reason: "q", Nodes: []string{"x"}},
			{Stage: "Filter", Plugin: "A", Code: "Unschedulable", Reason: "r", Nodes: []string{"n2"}},
		}},
	}, {
		name: "reasons joined",
		a: schedtrace.Attempt{Filter: map[string]*schedtrace.Status{
			"n1": {Code: "Unschedulable", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu", "Insufficient memory"}},
			"n2": nil, "n3": nil,
		}},
		want: filterResult{feasible: 2, groups: []FilterGroup{
			{Stage: "Filter", Plugin: "NodeResourcesFit", Code: "Unschedulable", Reason: "Insufficient cpu; Insufficient memory", Nodes: []string{"n1"}},
		}},
	}, {
		name: "PreFilter rejection: every scenario node, none unseen",
		a:    schedtrace.Attempt{PreFilter: &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Plugin: "P", Reasons: []string{"no"}}},
		want: filterResult{groups: []FilterGroup{
			{Stage: "PreFilter", Plugin: "P", Code: "UnschedulableAndUnresolvable", Reason: "no", Nodes: nodes},
		}},
	}, {
		name: "PreFilter result: the nodes it leaves out and Filter did not see",
		a: schedtrace.Attempt{PreFilterNodes: []string{"n2", "other"}, PreFilterPlugins: []string{"NodeAffinity"},
			Filter: map[string]*schedtrace.Status{"n2": nil}},
		want: filterResult{feasible: 1, groups: []FilterGroup{
			{Stage: narrowed.Stage, Plugin: narrowed.Plugin, Code: narrowed.Code, Reason: narrowed.Reason, Nodes: []string{"n3", "n1"}},
		}},
	}, {
		name: "PreFilter result allowing none of them, one node filtered anyway",
		a: schedtrace.Attempt{PreFilterNodes: []string{}, PreFilterPlugins: []string{"NodeAffinity"},
			Filter: map[string]*schedtrace.Status{"n1": unsched("F", "r")}},
		want: filterResult{groups: []FilterGroup{
			{Stage: narrowed.Stage, Plugin: narrowed.Plugin, Code: narrowed.Code, Reason: narrowed.Reason, Nodes: []string{"n3", "n2"}},
			{Stage: "Filter", Plugin: "F", Code: "Unschedulable", Reason: "r", Nodes: []string{"n1"}},
		}},
	}, {
		name: "a node the attempt did not look at",
		a:    schedtrace.Attempt{Filter: map[string]*schedtrace.Status{"n3": nil, "n2": nil}},
		want: filterResult{feasible: 2, unseen: []string{"n1"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := explainFilters(tt.a, nodes, nodeOrder(nodes))
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(filterResult{})); diff != "" {
				t.Errorf("explainFilters (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExplainFiltersOrderIsStable: groups of one size whose stage, plugin
// and reason read the same when put end to end ("AB"+"c", "A"+"Bc"; or
// the same but for the code) come in one order on every run, not in the
// order of a map's iteration.
func TestExplainFiltersOrderIsStable(t *testing.T) {
	nodes := []string{"n1", "n2", "n3", "n4"}
	a := schedtrace.Attempt{Filter: map[string]*schedtrace.Status{
		"n1": {Code: "Unschedulable", Plugin: "AB", Reasons: []string{"c"}},
		"n2": {Code: "Unschedulable", Plugin: "A", Reasons: []string{"Bc"}},
		"n3": {Code: "UnschedulableAndUnresolvable", Plugin: "X", Reasons: []string{"r"}},
		"n4": {Code: "Unschedulable", Plugin: "X", Reasons: []string{"r"}},
	}}
	first := explainFilters(a, nodes, nodeOrder(nodes)).groups
	for range 50 {
		got := explainFilters(a, nodes, nodeOrder(nodes)).groups
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("groups of one attempt in another order (-first +now):\n%s", diff)
		}
	}
}
