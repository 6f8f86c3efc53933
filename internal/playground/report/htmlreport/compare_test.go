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

// TestCompareHighlightsMovedPod: the runs name their pods differently,
// as controllers do; web's second pod is on node-2 in one run and on
// node-3 in the other, and only it is marked in both runs.
func TestCompareHighlightsMovedPod(t *testing.T) {
	a := tutorial()
	b := tutorial()
	for i := range b.Pods {
		b.Pods[i].Name += "-x"
	}
	// Pods are by object, then name: web's are 0, 1, 3, 4.
	b.Pods[4].Node = "node-3"
	b.Nodes[1].Pods, b.Nodes[2].Pods = 1, 3
	_, doc := render(t, Page{Runs: []report.Run{{Config: "spread", Result: a}, {Config: "binpack", Result: b}}})
	runs := byClass(doc, "run")
	if len(runs) != 2 {
		t.Fatalf("%d run sections, want 2", len(runs))
	}
	for i, r := range runs {
		want := "default/" + []report.Result{a, b}[i].Pods[4].Name
		moved := byClass(r, "moved")
		if len(moved) != 1 {
			t.Fatalf("run %d: %d pods marked moved, want 1", i+1, len(moved))
		}
		if got := attr(moved[0], "title"); got != want {
			t.Errorf("run %d marks %s, want %s", i+1, got, want)
		}
		names := byClass(r, "name")
		if len(names) != 3 || text(names[0]) != "node-1" || text(names[2]) != "node-3" {
			t.Errorf("run %d: nodes not in the scenario's order", i+1)
		}
	}
	rows := byTag(byTag(doc, "table")[0], "tr")
	if len(rows) != 2 {
		t.Fatalf("moved table has %d rows, want a header and one pod", len(rows))
	}
	if got := text(rows[1]); !strings.Contains(got, "Deployment/web #4") || !strings.Contains(got, "node-2node-3") {
		t.Errorf("moved row %q", got)
	}
	if len(byClass(byClass(doc, "note")[0], "moved")) != 1 {
		t.Errorf("no legend for the moved mark")
	}
}

func TestCompareSameNamesNoneMoved(t *testing.T) {
	a := tutorial()
	_, doc := render(t, Page{Runs: []report.Run{{Config: "x", Result: a}, {Config: "y", Result: a}}})
	if got := len(byClass(doc, "moved")); got != 1 { // the legend's sample
		t.Errorf("%d moved marks, want only the legend's", got)
	}
}
