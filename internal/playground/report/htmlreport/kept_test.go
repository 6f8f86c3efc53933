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
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

func filtered(plugin, reason string, nodes ...string) report.FilterGroup {
	return report.FilterGroup{Stage: "Filter", Plugin: plugin, Code: "UnschedulableAndUnresolvable", Reason: reason, Nodes: nodes}
}

const (
	euOnly      = "node(s) violate rule eu-only (Require)"
	maintenance = "node is in a maintenance window until 2026-12-06T12:00:00Z"
)

// keptResult is the tutorial with its pods explained: three kept off
// node-2 and node-3 by a placement rule, one more off node-3 by each of
// four other reasons; off node-1 one by a reason holding markup, then two
// by another.
func keptResult() report.Result {
	r := tutorial()
	explain := func(i int, groups ...report.FilterGroup) {
		r.Pods[i].Explain = &report.Explanation{Profile: "p", Attempt: 1, Filtered: groups}
	}
	explain(0, filtered("PlacementPolicy", euOnly, "node-2", "node-3"), filtered("TaintToleration", hostile, "node-1"))
	explain(1, filtered("PlacementPolicy", euOnly, "node-2", "node-3"), filtered("NodeUnschedulable", "node(s) were unschedulable", "node-1"))
	// The same reason twice for a node still counts the pod once.
	explain(2, filtered("PlacementPolicy", euOnly, "node-2", "node-3"), filtered("PlacementPolicy", euOnly, "node-3"),
		filtered("MaintenanceWindow", maintenance, "node-3"), filtered("NodeUnschedulable", "node(s) were unschedulable", "node-1"))
	explain(3, filtered("NodeAffinity", "node(s) didn't match Pod's node affinity/selector", "node-3"))
	explain(4, filtered("NodeResourcesFit", "Insufficient cpu", "node-3"))
	explain(5, filtered("NodePorts", "node(s) didn't have free ports", "node-3"))
	return r
}

// keptText is what a node column says kept pods off it, line by line.
func keptText(t *testing.T, col *html.Node) []string {
	t.Helper()
	var out []string
	for _, k := range byClass(col, "kept") {
		out = append(out, text(k))
	}
	return out
}

// TestKeptOff: each node column lists what kept the explained pods off
// it, by plugin and reason with a pod count, the most pods first, at most
// keptLines and how many more; markup in a reason is text.
func TestKeptOff(t *testing.T) {
	out, doc := render(t, Page{Runs: []report.Run{{Result: keptResult()}}})
	cols := byClass(doc, "node")
	if len(cols) != 3 {
		t.Fatalf("%d node columns, want 3", len(cols))
	}
	want := [][]string{
		{"kept off 2 pods: NodeUnschedulable: node(s) were unschedulable", "kept off 1 pod: TaintToleration: " + hostile},
		{"kept off 3 pods: PlacementPolicy: " + euOnly},
		{
			"kept off 3 pods: PlacementPolicy: " + euOnly,
			"kept off 1 pod: MaintenanceWindow: " + maintenance,
			"kept off 1 pod: NodeAffinity: node(s) didn't match Pod's node affinity/selector",
			"and 2 more",
		},
	}
	for i, w := range want {
		if diff := cmp.Diff(w, keptText(t, cols[i])); diff != "" {
			t.Errorf("%s (-want +got):\n%s", childText(t, cols[i], "name"), diff)
		}
	}
	for _, raw := range []string{"<script", "<img", "<b "} {
		if strings.Contains(out, raw) {
			t.Errorf("raw %q in the output", raw)
		}
	}
}

// TestKeptOffCompact: a compact run's bars count in their titles the
// explained pods kept off each node.
func TestKeptOffCompact(t *testing.T) {
	r := large(CompactNodes+1, 2)
	for i := range 3 {
		r.Pods[i].Explain = &report.Explanation{Filtered: []report.FilterGroup{filtered("PlacementPolicy", euOnly, r.Nodes[7].Name)}}
	}
	_, doc := render(t, Page{Runs: []report.Run{{Result: r}}})
	titles := byTag(byClass(doc, "bars")[0], "title")
	if len(titles) != CompactNodes+1 {
		t.Fatalf("%d bar titles, want %d", len(titles), CompactNodes+1)
	}
	if got, w := text(titles[7]), fmt.Sprintf("%s: 2 pods; kept off 3 explained pods", r.Nodes[7].Name); got != w {
		t.Errorf("bar title %q, want %q", got, w)
	}
	if got := text(titles[8]); strings.Contains(got, "kept off") {
		t.Errorf("bar title %q: no pod was kept off it", got)
	}
	if got := len(byClass(doc, "kept")); got != 0 {
		t.Errorf("%d kept lines on a compact page, want none", got)
	}
}

// TestKeptOffLarge: at 5,000 nodes and 50,000 pods, the 500 unschedulable
// pods explained, each rejected on every node (2.5 million rejections),
// every node shows a bounded count. (The page itself is large: each
// explanation's filtered table names every node.)
func TestKeptOffLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large page")
	}
	r := large(5000, 10)
	nodes := make([]string, len(r.Nodes))
	for i, n := range r.Nodes {
		nodes[i] = n.Name
	}
	for i := range r.Pods {
		if r.Pods[i].Node == "" {
			r.Pods[i].Explain = &report.Explanation{Filtered: []report.FilterGroup{
				filtered("NodeResourcesFit", "Insufficient cpu", nodes[:4000]...),
				filtered("PlacementPolicy", euOnly, nodes[4000:]...),
				filtered("NodeResourcesFit", "Insufficient memory", nodes[4000:]...), // a second reason on a node
			}}
		}
	}
	start := time.Now()
	v := build(Page{Runs: []report.Run{{Result: r}}}, CompactNodes, CompactPods)
	t.Logf("5,000 nodes, 50,000 pods, 500 of them rejected on every node: the view in %v", time.Since(start))
	for _, n := range v.Runs[0].Groups[0].Nodes {
		if n.KeptPods != 500 || len(n.Kept) > keptLines {
			t.Fatalf("%s: kept off %d pods, %d lines; want 500 pods, at most %d lines", n.Name, n.KeptPods, len(n.Kept), keptLines)
		}
	}
}
