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

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// blockMarks are the marks on each pod block of the page's first run, by
// the block's title, as "label class" (the class pass, fail or held).
func blockMarks(t *testing.T, doc *html.Node) (marks map[string][]string, blocks map[string]*html.Node) {
	t.Helper()
	marks, blocks = map[string][]string{}, map[string]*html.Node{}
	for _, b := range byClass(byClass(doc, "run")[0], "pod") {
		if blocks[attr(b, "title")] != nil {
			t.Fatalf("two blocks titled %s", attr(b, "title"))
		}
		blocks[attr(b, "title")] = b
		for _, m := range byClass(b, "emark") {
			class := strings.TrimSpace(strings.TrimPrefix(attr(m, "class"), "emark"))
			marks[attr(b, "title")] = append(marks[attr(b, "title")], text(m)+" "+class)
		}
	}
	return marks, blocks
}

// TestExpectationMarks: each pod block of a pod an expectation concerned
// carries its mark, pass, fail (the block outlined) or held; an
// expectation about a step's pods marks none; each failed expectation
// links to the first pod that broke it.
func TestExpectationMarks(t *testing.T) {
	r := tutorial()
	r.Pods = append(r.Pods, report.PodResult{Namespace: "default", Name: "big", Reason: "Unschedulable: 0/3 nodes are available"})
	es := []Expectation{
		{Name: "expect[0] web spread", Passed: true, Pods: []string{"default/web-a0", "default/web-c0", "default/gone"}},
		{Name: "expect[1] api on node-1", Message: "2 of 3 pods are not on node-1", Pods: []string{"default/api-b0", "default/api-d0", "default/api-d1"}, Failing: []string{"default/api-d1", "default/api-d0"}},
		{Name: "expect[2] at the step", Message: "after step 1 (scale): 1 pod", Pods: []string{"default/web-a1"}, Failing: []string{"default/web-a1"}, At: "after step 1 (scale)"},
		{Name: "expect[3] big is bound", Message: "default/big is pending", Pods: []string{"default/big"}, Failing: []string{"default/big"}},
		{Name: "expect[4] no pod", Message: "no pod of the result matches"},
	}
	_, doc := render(t, Page{Runs: []report.Run{{Result: r}}, Expectations: es})
	marks, blocks := blockMarks(t, doc)
	want := map[string][]string{
		"default/web-a0": {"e0 pass"},
		"default/web-c0": {"e0 pass"},
		"default/api-b0": {"e1 held"},
		"default/api-d0": {"e1 fail"},
		"default/api-d1": {"e1 fail"},
		"default/big":    {"e3 fail"},
	}
	if diff := cmp.Diff(want, marks); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	for title, b := range blocks {
		if broke := title == "default/api-d0" || title == "default/api-d1" || title == "default/big"; hasClass(b, "broke") != broke {
			t.Errorf("%s: outlined %v, want %v", title, hasClass(b, "broke"), broke)
		}
	}
	mark := byClass(blocks["default/api-d1"], "emark")[0]
	if got, w := attr(mark, "title"), "expect[1] api on node-1: failed: 2 of 3 pods are not on node-1"; got != w {
		t.Errorf("mark title %q, want %q", got, w)
	}
	if got, w := attr(byClass(blocks["default/web-a0"], "emark")[0], "title"), "expect[0] web spread: passed"; got != w {
		t.Errorf("mark title %q, want %q", got, w)
	}

	lis := byTag(byClass(doc, "expectations")[0], "li")
	links := map[int]*html.Node{}
	for i, li := range lis {
		if a := byTag(li, "a"); len(a) > 0 {
			links[i] = find(t, doc, attr(a[0], "href"))
		}
	}
	if len(links) != 2 || links[1] != blocks["default/api-d1"] || links[3] != blocks["default/big"] {
		t.Errorf("expectation links: want expect[1] to api-d1 (first failing) and expect[3] to big, got %d links", len(links))
	}
	notes := text(byTag(doc, "section")[0])
	if !strings.Contains(notes, "expect[2] at the step is about the pods after step 1 (scale): they are not marked") {
		t.Errorf("no note on the unmarked step expectation:\n%s", notes)
	}
}

// TestExpectationMarksFirstRunOnly: with samePlacementsAs runs beside the
// scenario's own, only the first run's blocks are marked and a note says
// the other config's pods are not.
func TestExpectationMarksFirstRunOnly(t *testing.T) {
	es := []Expectation{{Name: "expect[0] same", Message: "placed otherwise", Pods: []string{"default/web-a0"}, Failing: []string{"default/web-a0"}, Other: "other.yaml"}}
	_, doc := render(t, Page{Runs: []report.Run{{Config: "mine.yaml", Result: tutorial()}, {Config: "other.yaml", Result: tutorial()}}, Expectations: es})
	runs := byClass(doc, "run")
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	if got := len(byClass(runs[0], "emark")); got != 1 {
		t.Errorf("first run: %d marks, want 1", got)
	}
	if got := len(byClass(runs[1], "emark")) + len(byClass(runs[1], "broke")); got != 0 {
		t.Errorf("second run: %d marks, want none", got)
	}
	if !strings.Contains(text(byClass(doc, "expectations")[0].Parent), "not under other.yaml") {
		t.Errorf("no note that other.yaml's pods are not marked")
	}
}

// TestExpectationMarksCompact: a compact run has no pod block to mark:
// the page says so.
func TestExpectationMarksCompact(t *testing.T) {
	r := large(CompactNodes+1, 2)
	es := []Expectation{{Name: "expect[0] x", Message: "m", Pods: []string{r.Pods[0].Namespace + "/" + r.Pods[0].Name}, Failing: []string{r.Pods[0].Namespace + "/" + r.Pods[0].Name}}}
	_, doc := render(t, Page{Runs: []report.Run{{Result: r}}, Expectations: es})
	if got := len(byClass(doc, "emark")) + len(byClass(doc, "broke")); got != 0 {
		t.Errorf("%d marks on a compact page, want none", got)
	}
	if !strings.Contains(text(byTag(doc, "body")[0]), "The pods of each expectation are not marked") {
		t.Errorf("the compact page does not say the pods are not marked")
	}
}
