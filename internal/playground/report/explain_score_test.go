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

func TestCandidates(t *testing.T) {
	a := schedtrace.Attempt{
		Weights: map[string]int{"A": 2, "Unweighted": 0},
		Scores: []schedtrace.NodeScore{
			{Node: "n1", Plugins: []schedtrace.PluginScore{{Plugin: "A", Raw: 3, Weighted: 60}, {Plugin: "Unweighted", Raw: 7, Weighted: 70}}, Total: 130},
			{Node: "n2", Plugins: []schedtrace.PluginScore{{Plugin: "Missing", Raw: 1, Weighted: 10}}, Total: 10},
		},
		Reserved: "n2",
	}
	want := []Candidate{
		{Node: "n1", Total: 130, Scores: []PluginScore{{"A", 3, 30, 2, 60}, {"Unweighted", 7, 70, 1, 70}}},
		{Node: "n2", Chosen: true, Total: 10, Scores: []PluginScore{{"Missing", 1, 10, 1, 10}}},
	}
	if diff := cmp.Diff(want, candidates(a)); diff != "" {
		t.Errorf("candidates (weight 0 or none counts as 1) (-want +got):\n%s", diff)
	}
}

func TestRankAndTopCandidates(t *testing.T) {
	nodes := []string{"n3", "n1", "n2"}
	c := func(node string, total int64, chosen bool) Candidate {
		return Candidate{Node: node, Total: total, Chosen: chosen}
	}
	tests := []struct {
		name  string
		cands []Candidate
		top   int
		want  []Candidate
	}{
		{"none", nil, 3, nil},
		{"highest total first", []Candidate{c("n1", 1, false), c("n2", 3, true), c("n3", 2, false)}, 5,
			[]Candidate{c("n2", 3, true), c("n3", 2, false), c("n1", 1, false)}},
		{"ties: chosen first, then scenario order, then names", []Candidate{c("zz", 5, false), c("n2", 5, false), c("aa", 5, false), c("n1", 5, true), c("n3", 5, false)}, 5,
			[]Candidate{c("n1", 5, true), c("n3", 5, false), c("n2", 5, false), c("aa", 5, false), c("zz", 5, false)}},
		{"cut at top, chosen among them", []Candidate{c("n1", 3, true), c("n2", 2, false), c("n3", 1, false)}, 2,
			[]Candidate{c("n1", 3, true), c("n2", 2, false)}},
		{"cut at top, the chosen node takes the last place", []Candidate{c("n1", 3, false), c("n2", 2, false), c("n3", 1, true)}, 2,
			[]Candidate{c("n1", 3, false), c("n3", 1, true)}},
		{"cut at top, none chosen", []Candidate{c("n1", 3, false), c("n2", 2, false), c("n3", 1, false)}, 1,
			[]Candidate{c("n1", 3, false)}},
		{"exactly top", []Candidate{c("n1", 3, false), c("n2", 2, true)}, 2,
			[]Candidate{c("n1", 3, false), c("n2", 2, true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rankCandidates(tt.cands, nodeOrder(nodes))
			if diff := cmp.Diff(tt.want, topCandidates(tt.cands, tt.top)); diff != "" {
				t.Errorf("ranked top %d (-want +got):\n%s", tt.top, diff)
			}
		})
	}
}

func TestExplainScores(t *testing.T) {
	score := func(node string, plugins ...string) schedtrace.NodeScore {
		ns := schedtrace.NodeScore{Node: node}
		for _, p := range plugins {
			ns.Plugins = append(ns.Plugins, schedtrace.PluginScore{Plugin: p, Raw: 1, Weighted: 10})
			ns.Total += 10
		}
		return ns
	}
	tests := []struct {
		name string
		a    schedtrace.Attempt
		want scoreResult
	}{{
		name: "plugins in the framework's order, skipped ones by name",
		a: schedtrace.Attempt{Weights: map[string]int{"Z": 1, "B": 1, "A": 1, "Y": 1},
			Scores: []schedtrace.NodeScore{score("n1", "B", "A")}, Reserved: "n1"},
		want: scoreResult{
			plugins:    []PluginWeight{{"B", 1}, {"A", 1}},
			candidates: []Candidate{{Node: "n1", Chosen: true, Total: 20, Scores: []PluginScore{{"B", 1, 10, 1, 10}, {"A", 1, 10, 1, 10}}}},
			skipped:    []string{"Y", "Z"},
		},
	}, {
		name: "scored but no node: every weighted plugin skipped",
		a:    schedtrace.Attempt{Weights: map[string]int{"A": 1}, Scores: []schedtrace.NodeScore{}},
		want: scoreResult{skipped: []string{"A"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := explainScores(tt.a, 5, nodeOrder([]string{"n1"}))
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(scoreResult{})); diff != "" {
				t.Errorf("explainScores (-want +got):\n%s", diff)
			}
		})
	}
}
