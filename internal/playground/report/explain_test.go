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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

func unsched(plugin, reason string) *schedtrace.Status {
	return &schedtrace.Status{Code: "Unschedulable", Plugin: plugin, Reasons: []string{reason}}
}

// scoredAttempt is an attempt on seven nodes: three feasible and scored
// by A and B (Skipped has a weight but did not score), three filtered out,
// n7 not evaluated.
func scoredAttempt() schedtrace.Attempt {
	return schedtrace.Attempt{
		Profile: "p", Number: 2, Weights: map[string]int{"A": 1, "B": 3, "Skipped": 1},
		Filter: map[string]*schedtrace.Status{
			"n1": nil, "n2": nil, "n3": nil,
			"n4": unsched("NodeResourcesFit", "Insufficient cpu"),
			"n5": unsched("NodeResourcesFit", "Insufficient cpu"),
			"n6": unsched("TaintToleration", "untolerated taint"),
		},
		Scores: []schedtrace.NodeScore{
			{Node: "n1", Plugins: []schedtrace.PluginScore{{Plugin: "A", Raw: 5, Weighted: 50}, {Plugin: "B", Raw: 1, Weighted: 300}}, Total: 350},
			{Node: "n2", Plugins: []schedtrace.PluginScore{{Plugin: "A", Raw: 10, Weighted: 100}, {Plugin: "B", Raw: 0, Weighted: 0}}, Total: 100},
			{Node: "n3", Plugins: []schedtrace.PluginScore{{Plugin: "A", Raw: 2, Weighted: 20}, {Plugin: "B", Raw: 1, Weighted: 300}}, Total: 320},
		},
		Reserved: "n1",
	}
}

var scoredNodes = []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"}

func TestExplain(t *testing.T) {
	scoredFiltered := []FilterGroup{
		{Stage: "Filter", Plugin: "NodeResourcesFit", Code: "Unschedulable", Reason: "Insufficient cpu", Nodes: []string{"n4", "n5"}},
		{Stage: "Filter", Plugin: "TaintToleration", Code: "Unschedulable", Reason: "untolerated taint", Nodes: []string{"n6"}},
	}
	const (
		unseenN7 = "not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): n7"
		skipped  = "score plugins skipped for this pod by their PreScore: Skipped"
	)
	n1 := Candidate{Node: "n1", Chosen: true, Total: 350, Scores: []PluginScore{{"A", 5, 50, 1, 50}, {"B", 1, 100, 3, 300}}}
	n2 := Candidate{Node: "n2", Total: 100, Scores: []PluginScore{{"A", 10, 100, 1, 100}, {"B", 0, 0, 3, 0}}}
	n3 := Candidate{Node: "n3", Total: 320, Scores: []PluginScore{{"A", 2, 20, 1, 20}, {"B", 1, 100, 3, 300}}}
	// n2 scores as n1 does, and is chosen.
	tie := scoredAttempt()
	tie.Scores[1].Plugins, tie.Scores[1].Total, tie.Reserved = tie.Scores[0].Plugins, 350, "n2"
	tieN2 := Candidate{Node: "n2", Chosen: true, Total: 350, Scores: n1.Scores}
	nominated := scoredAttempt()
	nominated.Nominated = "n9"
	noPlugin := schedtrace.Attempt{Profile: "p", Number: 1, PreFilterPlugins: []string{"NodeAffinity", "PlacementPolicy"},
		PreFilter: &schedtrace.Status{Code: "Unschedulable", Reasons: []string{"a", "b"}}}

	tests := []struct {
		name  string
		a     schedtrace.Attempt
		found bool
		nodes []string
		bound string
		top   int
		want  *Explanation
	}{{
		name: "scored, the top 2", a: scoredAttempt(), found: true, nodes: scoredNodes, bound: "n1", top: 2,
		want: &Explanation{
			Profile: "p", Attempt: 2, Chosen: "n1", Feasible: 3, Scored: true,
			Plugins:    []PluginWeight{{"A", 1}, {"B", 3}},
			Candidates: []Candidate{n1, n3},
			Filtered:   scoredFiltered,
			Notes:      []string{unseenN7, skipped},
		},
	}, {
		name: "top 0 lists DefaultExplainNodes, here all three", a: scoredAttempt(), found: true, nodes: scoredNodes, bound: "n1",
		want: &Explanation{
			Profile: "p", Attempt: 2, Chosen: "n1", Feasible: 3, Scored: true,
			Plugins:    []PluginWeight{{"A", 1}, {"B", 3}},
			Candidates: []Candidate{n1, n3, n2},
			Filtered:   scoredFiltered,
			Notes:      []string{unseenN7, skipped},
		},
	}, {
		name: "the chosen node first on a tie, and shown when only one is", a: tie, found: true, nodes: scoredNodes, bound: "n2", top: 1,
		want: &Explanation{
			Profile: "p", Attempt: 2, Chosen: "n2", Feasible: 3, Scored: true,
			Plugins:    []PluginWeight{{"A", 1}, {"B", 3}},
			Candidates: []Candidate{tieN2},
			Filtered:   scoredFiltered,
			Notes:      []string{unseenN7, skipped},
		},
	}, {
		name: "nominated, and bound elsewhere than chosen", a: nominated, found: true, nodes: scoredNodes, bound: "n9", top: 3,
		want: &Explanation{
			Profile: "p", Attempt: 2, Chosen: "n1", Feasible: 3, Scored: true,
			Plugins:    []PluginWeight{{"A", 1}, {"B", 3}},
			Candidates: []Candidate{n1, n3, n2},
			Filtered:   scoredFiltered,
			Notes: []string{unseenN7, skipped, "preemption (PostFilter) nominated node n9",
				`bound to n9, but the last recorded attempt chose "n1"`},
		},
	}, {
		name: "rejected by PreFilter",
		a: schedtrace.Attempt{Profile: "p", Number: 3, Failure: "0/2 nodes are available",
			PreFilter: &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Plugin: "NodeAffinity", Reasons: []string{"no match"}}},
		found: true, nodes: []string{"n1", "n2"}, top: 5,
		want: &Explanation{
			Profile: "p", Attempt: 3, Failure: "0/2 nodes are available",
			Filtered: []FilterGroup{{Stage: "PreFilter", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reason: "no match", Nodes: []string{"n1", "n2"}}},
		},
	}, {
		name: "rejected by a PreFilter that names no plugin: the PreFilter plugins", a: noPlugin, found: true, nodes: []string{"n1"}, top: 5,
		want: &Explanation{
			Profile: "p", Attempt: 1,
			Filtered: []FilterGroup{{Stage: "PreFilter", Plugin: "NodeAffinity,PlacementPolicy", Code: "Unschedulable", Reason: "a; b", Nodes: []string{"n1"}}},
		},
	}, {
		name: "a PreFilter result that narrows the nodes, a single feasible node",
		a: schedtrace.Attempt{Profile: "p", Number: 1, PreFilterNodes: []string{"n2"}, PreFilterPlugins: []string{"NodeAffinity"},
			Filter: map[string]*schedtrace.Status{"n2": nil}, Reserved: "n2"},
		found: true, nodes: []string{"n1", "n2"}, bound: "n2", top: 5,
		want: &Explanation{
			Profile: "p", Attempt: 1, Chosen: "n2", Feasible: 1,
			Candidates: []Candidate{{Node: "n2", Chosen: true}},
			Filtered: []FilterGroup{{Stage: "PreFilter", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable",
				Reason: "not among the nodes the PreFilter result allows", Nodes: []string{"n1"}}},
			Notes: []string{"the only feasible node: the scheduler takes it without scoring"},
		},
	}, {
		name:  "reserved unscored among two feasible nodes, not bound (yet)",
		a:     schedtrace.Attempt{Profile: "p", Number: 1, Filter: map[string]*schedtrace.Status{"n1": nil, "n2": nil}, Reserved: "n2"},
		found: true, nodes: []string{"n1", "n2"}, top: 5,
		want: &Explanation{Profile: "p", Attempt: 1, Chosen: "n2", Feasible: 2, Candidates: []Candidate{{Node: "n2", Chosen: true}}},
	}, {
		name: "no attempt recorded", a: schedtrace.Attempt{Profile: "ignored", Number: 4}, found: false, nodes: []string{"n1"}, bound: "n1",
		want: &Explanation{Notes: []string{"no scheduling attempt was recorded: the pod was created with spec.nodeName, or the scheduler never tried it"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Explain(tt.a, tt.found, tt.nodes, tt.bound, tt.top)
			if tt.want.Scored && !kubeversion.Has(kubeversion.RawScores) {
				tt.want.NoRawScores = noRawScores
			}
			if diff := cmp.Diff(tt.want, e); diff != "" {
				t.Fatalf("Explain (-want +got):\n%s", diff)
			}
			for _, c := range e.Candidates {
				var sum int64
				for _, s := range c.Scores {
					sum += s.Normalized * int64(s.Weight)
				}
				if tt.want.Scored && sum != c.Total {
					t.Errorf("%s: sum of weighted scores %d, total %d", c.Node, sum, c.Total)
				}
			}
		})
	}
}

// TestExplainJSON checks the field names of the JSON schema, that an
// unexplained result has no "explain" field (TestWriteJSON) and that an
// explanation reads back as written.
func TestExplainJSON(t *testing.T) {
	e := &Explanation{Profile: "p", Attempt: 1, Chosen: "n1", Feasible: 1, Scored: true,
		Plugins:    []PluginWeight{{"A", 2}},
		Candidates: []Candidate{{Node: "n1", Chosen: true, Total: 20, Scores: []PluginScore{{"A", 1, 10, 2, 20}}}},
		Filtered:   []FilterGroup{{Stage: "Filter", Plugin: "F", Code: "Unschedulable", Reason: "r", Nodes: []string{"n2"}}}}
	golden := "explain"
	if !kubeversion.Has(kubeversion.RawScores) {
		// What Explain makes of what the recorder has there.
		e.Candidates[0].Scores[0].Raw = 0
		e.NoRawScores = noRawScores
		// NoRawScores names the minor.
		golden = "explain-without-raw-" + kubeversion.String()
	}
	r := Result{Pods: []PodResult{{Namespace: "ns", Name: "pod", Node: "n1", Explain: e}}}
	checkGolden(t, golden, resultJSON(r))
	var out bytes.Buffer
	if err := WriteJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || !cmp.Equal(back.Pods[0].Explain, e) {
		t.Errorf("round trip: %v\n%s", err, cmp.Diff(e, back.Pods[0].Explain))
	}
}
