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

package playground

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

func unsched(plugin, reason string) *schedtrace.Status {
	return &schedtrace.Status{Code: "Unschedulable", Plugin: plugin, Reasons: []string{reason}}
}

func TestExplainScored(t *testing.T) {
	a := schedtrace.Attempt{
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
	nodes := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"}
	e := explain(a, true, nodes, "n1", 2)
	want := &Explanation{
		Profile: "p", Attempt: 2, Chosen: "n1", Feasible: 3, Scored: true,
		Plugins: []PluginWeight{{"A", 1}, {"B", 3}},
		Candidates: []Candidate{
			{Node: "n1", Chosen: true, Total: 350, Scores: []PluginScore{{"A", 5, 50, 1, 50}, {"B", 1, 100, 3, 300}}},
			{Node: "n3", Total: 320, Scores: []PluginScore{{"A", 2, 20, 1, 20}, {"B", 1, 100, 3, 300}}},
		},
		Filtered: []FilterGroup{
			{Stage: "Filter", Plugin: "NodeResourcesFit", Code: "Unschedulable", Reason: "Insufficient cpu", Nodes: []string{"n4", "n5"}},
			{Stage: "Filter", Plugin: "TaintToleration", Code: "Unschedulable", Reason: "untolerated taint", Nodes: []string{"n6"}},
		},
		Notes: []string{
			"not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): n7",
			"score plugins skipped for this pod by their PreScore: Skipped",
		},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Fatalf("explanation (-want +got):\n%s", diff)
	}
	for _, c := range e.Candidates {
		var sum int64
		for _, s := range c.Scores {
			sum += s.Normalized * int64(s.Weight)
		}
		if sum != c.Total {
			t.Errorf("%s: sum of weighted scores %d, total %d", c.Node, sum, c.Total)
		}
	}

	// With one candidate shown, the chosen node still is, even on a tie
	// with a node listed before it.
	a.Scores[1].Total, a.Reserved = 350, "n2"
	e = explain(a, true, nodes, "n2", 1)
	if len(e.Candidates) != 1 || e.Candidates[0].Node != "n2" || !e.Candidates[0].Chosen {
		t.Errorf("candidates %+v, want the chosen n2 alone", e.Candidates)
	}

	var out bytes.Buffer
	r := Result{Pods: []PodResult{{Namespace: "ns", Name: "pod", Node: "n1", Explain: explain(a, true, nodes, "n1", 3)}}}
	if err := WriteExplainText(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ns/pod -> n1", "*n2", "B       3", "100 (300)", "total", "Filter NodeResourcesFit  Unschedulable  Insufficient cpu   n4, n5"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, out.String())
		}
	}
}

func TestExplainUnschedulable(t *testing.T) {
	nodes := []string{"n1", "n2"}
	a := schedtrace.Attempt{
		Profile: "p", Number: 3,
		PreFilter: &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Plugin: "NodeAffinity", Reasons: []string{"no match"}},
		Failure:   "0/2 nodes are available",
	}
	e := explain(a, true, nodes, "", 5)
	want := &Explanation{
		Profile: "p", Attempt: 3, Failure: "0/2 nodes are available",
		Filtered: []FilterGroup{{Stage: "PreFilter", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reason: "no match", Nodes: nodes}},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
	}

	// A PreFilter result that narrows the nodes, a single feasible node.
	a = schedtrace.Attempt{Profile: "p", Number: 1, PreFilterNodes: []string{"n2"}, PreFilterPlugins: []string{"NodeAffinity"},
		Filter: map[string]*schedtrace.Status{"n2": nil}, Reserved: "n2"}
	e = explain(a, true, nodes, "n2", 5)
	if e.Scored || e.Feasible != 1 || len(e.Candidates) != 1 || !e.Candidates[0].Chosen || len(e.Filtered) != 1 ||
		e.Filtered[0].Stage != "PreFilter" || !cmp.Equal(e.Filtered[0].Nodes, []string{"n1"}) || len(e.Notes) != 1 {
		t.Errorf("explanation %+v", e)
	}

	if e := explain(schedtrace.Attempt{}, false, nodes, "n1", 5); e.Attempt != 0 || len(e.Notes) != 1 {
		t.Errorf("explanation of an unrecorded pod: %+v", e)
	}
}

// TestExplainJSON checks the field names of the JSON schema and that an
// unexplained result has no "explain" field.
func TestExplainJSON(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, Result{Pods: []PodResult{{Namespace: "ns", Name: "pod", Node: "n1"}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "explain") {
		t.Errorf("JSON without explanations mentions them:\n%s", out.String())
	}
	e := &Explanation{Profile: "p", Attempt: 1, Chosen: "n1", Feasible: 1, Scored: true,
		Plugins:    []PluginWeight{{"A", 2}},
		Candidates: []Candidate{{Node: "n1", Chosen: true, Total: 20, Scores: []PluginScore{{"A", 1, 10, 2, 20}}}},
		Filtered:   []FilterGroup{{Stage: "Filter", Plugin: "F", Code: "Unschedulable", Reason: "r", Nodes: []string{"n2"}}}}
	out.Reset()
	if err := WriteJSON(&out, Result{Pods: []PodResult{{Namespace: "ns", Name: "pod", Node: "n1", Explain: e}}}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Pods []struct {
			Explain map[string]any `json:"explain"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range doc.Pods[0].Explain {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"attempt", "candidates", "chosen", "feasible", "filtered", "plugins", "profile", "scored"}, keys); diff != "" {
		t.Errorf("explain fields (-want +got):\n%s", diff)
	}
	cand := doc.Pods[0].Explain["candidates"].([]any)[0].(map[string]any)
	score := cand["scores"].([]any)[0].(map[string]any)
	if _, ok := score["normalized"]; !ok || cand["total"] != float64(20) {
		t.Errorf("candidate %v", cand)
	}
	var back Result
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || !cmp.Equal(back.Pods[0].Explain, e) {
		t.Errorf("round trip: %v\n%s", err, cmp.Diff(e, back.Pods[0].Explain))
	}
}

// TestWriteCompareExplainTextEveryPod: runs that made different pods (one
// more replica in the second, fewer in the first) are written pod by pod,
// every pod of every run, without indexing past a shorter run.
func TestWriteCompareExplainTextEveryPod(t *testing.T) {
	first := Result{Pods: []PodResult{
		{Namespace: "default", Name: "web-a", Object: "Deployment/web", Node: "n1"},
	}}
	second := Result{Pods: []PodResult{
		{Namespace: "default", Name: "web-b", Object: "Deployment/web", Node: "n2"},
		{Namespace: "default", Name: "web-c", Object: "Deployment/web", Node: "n1"},
		{Namespace: "default", Name: "solo", Object: "Pod/solo", Node: "n2"},
	}}
	for _, runs := range [][]Run{
		{{Config: "a.yaml", Result: first}, {Config: "b.yaml", Result: second}},
		{{Config: "b.yaml", Result: second}, {Config: "a.yaml", Result: first}},
	} {
		t.Run(runs[0].Config+" first", func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCompareExplainText(&b, runs); err != nil {
				t.Fatal(err)
			}
			_, got, _ := strings.Cut(b.String(), explainLegend+"\n")
			n1, n2 := "[1] "+runs[0].Config, "[2] "+runs[1].Config
			node := func(r Run, k int) string {
				if k >= len(r.Result.Pods) {
					return "-"
				}
				return r.Result.Pods[k].Node
			}
			want := "\ndefault/Deployment/web #1\n  " + n1 + " -> " + node(runs[0], 0) + "\n  " + n2 + " -> " + node(runs[1], 0) + "\n" +
				"\ndefault/Deployment/web #2\n  " + n1 + " -> " + node(runs[0], 1) + "\n  " + n2 + " -> " + node(runs[1], 1) + "\n" +
				"\ndefault/solo\n"
			for i, r := range runs {
				if len(r.Result.Pods) == 3 {
					want += "  [" + string(rune('1'+i)) + "] " + r.Config + " -> n2\n"
				} else {
					want += "  [" + string(rune('1'+i)) + "] " + r.Config + " -> -\n"
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("explanations (-want +got):\n%s", diff)
			}
		})
	}
}
