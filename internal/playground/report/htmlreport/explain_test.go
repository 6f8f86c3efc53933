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

package htmlreport

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

func scores(norm ...int64) []report.PluginScore {
	names := []string{"NodeResourcesFit", "PodTopologySpread"}
	out := make([]report.PluginScore, len(norm))
	for i, n := range norm {
		out[i] = report.PluginScore{Plugin: names[i], Normalized: n, Weight: 2, Weighted: 2 * n}
	}
	return out
}

// explained is the tutorial with web's first pod explained: node-1 chosen
// over node-2, node-3 filtered out.
func explained() report.Result {
	r := tutorial()
	r.Pods[0].Explain = &report.Explanation{
		Profile: "default-scheduler", Attempt: 1, Chosen: "node-1", Feasible: 3, Scored: true,
		Plugins: []report.PluginWeight{{Name: "NodeResourcesFit", Weight: 2}, {Name: "PodTopologySpread", Weight: 2}},
		Candidates: []report.Candidate{
			{Node: "node-1", Chosen: true, Scores: scores(100, 50), Total: 300},
			{Node: "node-2", Scores: scores(10, 0), Total: 20},
		},
		Filtered: []report.FilterGroup{{Stage: "Filter", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reason: "node(s) didn't match", Nodes: []string{"node-3"}}},
	}
	return r
}

func TestExplainAnchorsResolve(t *testing.T) {
	r := explained()
	_, doc := render(t, Page{Runs: []report.Run{{Config: "a", Result: r}, {Config: "b", Result: r}}})
	ids := map[string]bool{}
	for _, n := range all(doc, func(n *html.Node) bool { return attr(n, "id") != "" }) {
		if ids[attr(n, "id")] {
			t.Errorf("id %q twice", attr(n, "id"))
		}
		ids[attr(n, "id")] = true
	}
	links := 0
	for _, n := range all(doc, func(n *html.Node) bool { return attr(n, "href") != "" }) {
		links++
		if id := strings.TrimPrefix(attr(n, "href"), "#"); !ids[id] {
			t.Errorf("href %q names no id", attr(n, "href"))
		}
	}
	if links != 4 { // per run: the pod to its explanation and back
		t.Errorf("%d links, want 4", links)
	}
	pod := byClass(byClass(doc, "node")[0], "pod")[0]
	x := find(t, doc, attr(pod, "href"))
	if !hasClass(x, "explain") {
		t.Fatalf("pod block links to %s, not to an explanation", attr(pod, "href"))
	}
	if back := find(t, doc, attr(byTag(x, "a")[0], "href")); back != pod {
		t.Errorf("the explanation links back to %s, not to its pod", attr(back, "title"))
	}
}

func find(t *testing.T, doc *html.Node, href string) *html.Node {
	t.Helper()
	n := all(doc, func(n *html.Node) bool { return "#"+attr(n, "id") == href })
	if len(n) != 1 {
		t.Fatalf("%d elements with id %s", len(n), href)
	}
	return n[0]
}

func TestExplainHeatmap(t *testing.T) {
	_, doc := render(t, Page{Runs: []report.Run{{Result: explained()}}})
	heat := byClass(doc, "heatmap")
	if len(heat) != 1 {
		t.Fatalf("%d heatmaps, want 1", len(heat))
	}
	chosen := byClass(heat[0], "chosen")
	if len(chosen) != 4 || !strings.Contains(text(chosen[0]), "node-1 (chosen)") || text(chosen[1]) != "200 100" || text(chosen[3]) != "300" {
		t.Errorf("chosen node's column not marked: %d cells", len(chosen))
	}
	cells := byClass(heat[0], "cell")
	want := []struct{ text, level string }{{"200 100", "h5"}, {"20 10", "h0"}, {"100 50", "h2"}, {"0 0", "h0"}}
	if len(cells) != len(want) {
		t.Fatalf("%d score cells, want %d", len(cells), len(want))
	}
	for i, w := range want {
		if text(cells[i]) != w.text || !hasClass(cells[i], w.level) {
			t.Errorf("cell %d: %q %q, want %q %s", i, text(cells[i]), attr(cells[i], "class"), w.text, w.level)
		}
	}
	rows := byTag(byClass(doc, "filtered")[0], "tr")
	if len(rows) != 2 || !strings.Contains(text(rows[1]), "NodeAffinity") || !strings.Contains(text(rows[1]), "1: node-3") {
		t.Errorf("filtered nodes not grouped by plugin and reason")
	}
	if got := text(byTag(byClass(doc, "explain")[0], "p")[0]); got != "profile default-scheduler, attempt 1: 3 feasible nodes" {
		t.Errorf("attempt line %q", got)
	}
	if got := text(byTag(doc, "body")[0]); !strings.Contains(got, "1 more feasible nodes not shown") {
		t.Errorf("the third feasible node is not counted")
	}
}

// TestFilteredNodesCapped: a reason met on many nodes lists the first
// listedNodes of them and counts the rest; the page stays small.
func TestFilteredNodesCapped(t *testing.T) {
	r := explained()
	var nodes []string
	for i := range 5000 {
		nodes = append(nodes, fmt.Sprintf("node-%04d", i))
	}
	r.Pods[0].Explain.Filtered[0].Nodes = nodes
	out, doc := render(t, Page{Runs: []report.Run{{Result: r}}})
	row := text(byTag(byClass(doc, "filtered")[0], "tr")[1])
	if !strings.Contains(row, "5000: node-0000, node-0001") || !strings.Contains(row, "node-0019 and 4980 more") || strings.Contains(row, "node-0020") {
		t.Errorf("filtered row %q: want the first %d of 5000 nodes and the count of the rest", row, listedNodes)
	}
	if len(out) > 20_000 {
		t.Errorf("page of %d bytes for one explanation", len(out))
	}
}
