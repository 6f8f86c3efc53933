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
	"strings"
	"testing"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

const zone = "topology.kubernetes.io/zone"

func TestGroupByZone(t *testing.T) {
	r := tutorial()
	r.Nodes[0].Labels = map[string]string{zone: "zone-b"}
	r.Nodes[1].Labels = map[string]string{zone: "zone-a"}
	r.Nodes[2].Labels = map[string]string{zone: "zone-b"}
	out, doc := render(t, Page{Runs: []report.Run{{Result: r}}, GroupBy: zone})
	groups := byClass(doc, "group")
	if len(groups) != 2 {
		t.Fatalf("%d groups, want 2", len(groups))
	}
	for i, want := range []struct {
		zone  string
		nodes []string
	}{{"zone-b", []string{"node-1", "node-3"}}, {"zone-a", []string{"node-2"}}} {
		if got := text(byTag(groups[i], "h4")[0]); got != want.zone {
			t.Errorf("group %d is %q, want %q", i, got, want.zone)
		}
		var names []string
		for _, n := range byClass(groups[i], "name") {
			names = append(names, text(n))
		}
		if strings.Join(names, " ") != strings.Join(want.nodes, " ") {
			t.Errorf("%s holds %v, want %v", want.zone, names, want.nodes)
		}
	}
	if strings.Contains(out, "not grouped") {
		t.Errorf("the page says it is not grouped")
	}

	r.Nodes[1].Labels = nil
	_, doc = render(t, Page{Runs: []report.Run{{Result: r}}, GroupBy: zone})
	if got := text(byTag(byClass(doc, "group")[1], "h4")[0]); got != "no "+zone {
		t.Errorf("an unlabelled node's group is %q", got)
	}

	out, doc = render(t, Page{Runs: []report.Run{{Result: tutorial()}}, GroupBy: zone})
	if len(byClass(doc, "group")) != 1 || !strings.Contains(out, "not grouped by "+zone+": the result carries no node labels") {
		t.Errorf("without labels: want one group and a note")
	}
}

func TestNodeFacts(t *testing.T) {
	r := tutorial()
	r.Nodes[0].CPU = report.Use{Requested: 1500, Allocatable: 4000}
	r.Nodes[0].Memory = report.Use{Requested: 9 << 30, Allocatable: 8 << 30}
	r.Nodes[1].Taints = []string{"dedicated=gpu:NoSchedule"}
	r.Nodes[2].Conditions = []string{"DrainInProgress"}
	r.Nodes[2].Maintenance = "2026-12-06T09:00:00Z/PT2H"
	_, doc := render(t, Page{Runs: []report.Run{{Result: r}}})
	cols := byClass(doc, "node")
	uses := byClass(cols[0], "use")
	if len(uses) != 2 || text(uses[0]) != "cpu  37%" || attr(uses[0], "title") != "cpu 1500m of 4000m requested" || text(uses[1]) != "memory  112%" {
		t.Fatalf("node-1's use: %d meters", len(uses))
	}
	if rects := byTag(uses[1], "rect"); attr(rects[1], "width") != "50" || !hasClass(rects[1], "over") {
		t.Errorf("memory over allocatable: meter %v", rects[1].Attr)
	}
	if rects := byTag(uses[0], "rect"); attr(rects[1], "width") != "18" {
		t.Errorf("cpu meter %q wide, want 18", attr(rects[1], "width"))
	}
	if hasClass(cols[0], "marked") || !hasClass(cols[1], "marked") || !hasClass(cols[2], "marked") {
		t.Errorf("tainted or draining nodes not marked, or an untainted one marked")
	}
	if got := childText(t, cols[1], "mark"); got != "dedicated=gpu:NoSchedule" {
		t.Errorf("node-2's mark %q", got)
	}
	marks := byClass(cols[2], "mark")
	if len(marks) != 2 || text(marks[1]) != "maintenance window 2026-12-06T09:00:00Z/PT2H" {
		t.Errorf("node-3: %d marks", len(marks))
	}
	if len(byClass(cols[1], "use")) != 0 {
		t.Errorf("a node of unknown allocatable has a meter")
	}
}
