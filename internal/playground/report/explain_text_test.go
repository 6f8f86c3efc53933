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

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

// explainedRuns are two runs of the same scenario with explanations: a
// scored pod (two candidates shown in the first run, one in the second), an
// unexplained one, one rejected by PreFilter and one never scheduled (only
// in the first run).
func explainedRuns() []Run {
	rejected := schedtrace.Attempt{Profile: "p", Number: 3, Failure: "0/7 nodes are available",
		PreFilter: &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Plugin: "NodeAffinity", Reasons: []string{"no match"}}}
	first := Result{Pods: []PodResult{
		{Namespace: "ns", Name: "scored", Node: "n1", Explain: Explain(scoredAttempt(), true, scoredNodes, "n1", 2)},
		{Namespace: "ns", Name: "plain", Node: "n2"},
		{Namespace: "ns", Name: "rejected", Reason: "Unschedulable", Explain: Explain(rejected, true, scoredNodes, "", 5)},
		{Namespace: "ns", Name: "static", Node: "n3", Explain: Explain(schedtrace.Attempt{}, false, scoredNodes, "n3", 5)},
	}}
	second := Result{Pods: []PodResult{
		{Namespace: "ns", Name: "scored", Node: "n3", Explain: Explain(scoredAttempt(), true, scoredNodes, "n3", 1)},
		{Namespace: "ns", Name: "plain", Node: "n2"},
	}}
	return []Run{{Config: "a.yaml", Result: first}, {Config: "b.yaml", Result: second}}
}

// TestWriteExplainText pins the text byte for byte, as the flat playground
// package wrote it.
func TestWriteExplainText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteExplainText(&b, explainedRuns()[0].Result); err != nil {
		t.Fatal(err)
	}
	want := `explanations (last scheduling attempt of each pod; score cells: normalized (weighted); * chosen node):

ns/scored -> n1
  profile p, attempt 2: 3 feasible node(s)
  plugin  weight  *n1        n3
  A       1       50 (50)    20 (20)
  B       3       100 (300)  100 (300)
  total           350        320
  (1 more feasible node(s) not shown)
  filtered out:
    Filter NodeResourcesFit  Unschedulable  Insufficient cpu   n4, n5
    Filter TaintToleration   Unschedulable  untolerated taint  n6
  note: not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): n7
  note: score plugins skipped for this pod by their PreScore: Skipped

ns/rejected -> <none>
  profile p, attempt 3: 0 feasible node(s)
  filtered out:
    PreFilter NodeAffinity  UnschedulableAndUnresolvable  no match  n1, n2, n3, n4, n5, n6, n7
  failure: 0/7 nodes are available

ns/static -> n3
  note: no scheduling attempt was recorded: the pod was created with spec.nodeName, or the scheduler never tried it
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("explanations (-want +got):\n%s", diff)
	}
}

// TestWriteCompareExplainText pins the text byte for byte, as the flat
// playground package wrote it.
func TestWriteCompareExplainText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCompareExplainText(&b, explainedRuns()); err != nil {
		t.Fatal(err)
	}
	want := `explanations (last scheduling attempt of each pod; score cells: normalized (weighted); * chosen node):

ns/scored
  [1] a.yaml -> n1
      profile p, attempt 2: 3 feasible node(s)
      plugin  weight  *n1        n3
      A       1       50 (50)    20 (20)
      B       3       100 (300)  100 (300)
      total           350        320
      (1 more feasible node(s) not shown)
      filtered out:
        Filter NodeResourcesFit  Unschedulable  Insufficient cpu   n4, n5
        Filter TaintToleration   Unschedulable  untolerated taint  n6
      note: not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): n7
      note: score plugins skipped for this pod by their PreScore: Skipped
  [2] b.yaml -> n3
      profile p, attempt 2: 3 feasible node(s)
      plugin  weight  *n1
      A       1       50 (50)
      B       3       100 (300)
      total           350
      (2 more feasible node(s) not shown)
      filtered out:
        Filter NodeResourcesFit  Unschedulable  Insufficient cpu   n4, n5
        Filter TaintToleration   Unschedulable  untolerated taint  n6
      note: not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): n7
      note: score plugins skipped for this pod by their PreScore: Skipped
      note: bound to n3, but the last recorded attempt chose "n1"

ns/plain
  [1] a.yaml -> n2
  [2] b.yaml -> n2

ns/rejected
  [1] a.yaml -> <none>
      profile p, attempt 3: 0 feasible node(s)
      filtered out:
        PreFilter NodeAffinity  UnschedulableAndUnresolvable  no match  n1, n2, n3, n4, n5, n6, n7
      failure: 0/7 nodes are available
  [2] b.yaml -> -

ns/static
  [1] a.yaml -> n3
      note: no scheduling attempt was recorded: the pod was created with spec.nodeName, or the scheduler never tried it
  [2] b.yaml -> -
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("compared explanations (-want +got):\n%s", diff)
	}
}

// TestWriteExplanationMissingScore: a candidate without a score of a plugin
// (its list is shorter, or in another order) shows "-" there.
func TestWriteExplanationMissingScore(t *testing.T) {
	e := &Explanation{Profile: "p", Attempt: 1, Chosen: "n1", Feasible: 2, Scored: true,
		Plugins: []PluginWeight{{"A", 1}, {"B", 2}},
		Candidates: []Candidate{
			{Node: "n1", Chosen: true, Total: 30, Scores: []PluginScore{{"A", 1, 10, 1, 10}, {"B", 1, 10, 2, 20}}},
			{Node: "n2", Total: 20, Scores: []PluginScore{{"B", 1, 10, 2, 20}}},
		}}
	var b bytes.Buffer
	if err := writeExplanation(&b, e, ""); err != nil {
		t.Fatal(err)
	}
	want := `profile p, attempt 1: 2 feasible node(s)
plugin  weight  *n1      n2
A       1       10 (10)  -
B       2       10 (20)  -
total           30       20
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
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
