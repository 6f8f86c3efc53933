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

func TestTutorialColumns(t *testing.T) {
	r := tutorial()
	r.Pods = append(r.Pods, report.PodResult{Namespace: "default", Name: "big", Reason: "Unschedulable: 0/3 nodes are available"})
	r.Steps = []report.StepResult{{Step: "scale Deployment default/web to 2", Nodes: r.Nodes, Waiting: 1}}
	_, doc := render(t, Page{Title: "tutorial.yaml", Runs: []report.Run{{Result: r}}})
	cols := byClass(doc, "node")
	if len(cols) != 3 {
		t.Fatalf("%d node columns, want 3", len(cols))
	}
	for i, want := range []struct {
		name  string
		count int
	}{{"node-1", 3}, {"node-2", 2}, {"node-3", 2}} {
		if got := childText(t, cols[i], "name"); got != want.name {
			t.Errorf("column %d is %q, want %q", i, got, want.name)
		}
		if got := len(byClass(cols[i], "pod")); got != want.count {
			t.Errorf("%s has %d pod blocks, want %d", want.name, got, want.count)
		}
		if got, w := childText(t, cols[i], "count"), fmt.Sprintf("%d pods", want.count); got != w {
			t.Errorf("%s count %q, want %q", want.name, got, w)
		}
	}
	lane := byClass(doc, "lane")
	if len(lane) != 1 || len(byClass(lane[0], "pod")) != 1 || !strings.Contains(text(lane[0]), "0/3 nodes are available") {
		t.Errorf("unschedulable lane: want one pod with its reason, got %d lanes", len(lane))
	}
	if got := len(byClass(doc, "frame")); got != 1 {
		t.Errorf("%d step frames, want 1", got)
	}
	for _, p := range byClass(doc, "pod") {
		if attr(p, "id") == "" || !strings.HasPrefix(attr(p, "title"), "default/") {
			t.Errorf("pod block without id or title: %v", p.Attr)
		}
	}
	web, api := byClass(cols[0], "pod")[0], byClass(cols[0], "pod")[2]
	if attr(web, "class") == attr(api, "class") {
		t.Errorf("web and api share a colour: %q", attr(web, "class"))
	}
	if attr(web, "class") != attr(byClass(cols[1], "pod")[0], "class") {
		t.Errorf("web's pods differ in colour")
	}
}

func TestKarpenterColumns(t *testing.T) {
	r := tutorial()
	r.Karpenter = &report.KarpenterResult{NodePools: []string{"default"}, Nodes: []report.AddedNode{{Name: "kp-1", NodePool: "default", Zone: "zone-a", Pods: 1}}}
	r.Pods = append(r.Pods, pods("Deployment/web", "k", "kp-1", 1)...)
	_, doc := render(t, Page{Runs: []report.Run{{Result: r}}})
	added := byClass(doc, "added")
	if len(added) != 1 || childText(t, added[0], "name") != "kp-1" || len(byClass(added[0], "pod")) != 1 {
		t.Fatalf("want one column kp-1 with one pod marked added, got %d", len(added))
	}
	if !strings.Contains(text(added[0]), "added by Karpenter") {
		t.Errorf("kp-1 is not marked: %q", text(added[0]))
	}
}

func TestExpectations(t *testing.T) {
	_, doc := render(t, Page{Runs: []report.Run{{Result: tutorial()}}, Expectations: []Expectation{
		{Name: "spread", Passed: true}, {Name: "zones", Message: "node-3 holds 2 pods, want 1"},
	}})
	lis := byTag(byClass(doc, "expectations")[0], "li")
	if len(lis) != 2 || !hasClass(lis[0], "pass") || !hasClass(lis[1], "fail") {
		t.Fatalf("want a passed and a failed expectation, got %d items", len(lis))
	}
	if !strings.Contains(text(lis[1]), "want 1") {
		t.Errorf("failed expectation without its message: %q", text(lis[1]))
	}
}

func TestSeatsAndShare(t *testing.T) {
	r := tutorial()
	r.Pods = append(r.Pods, report.PodResult{Namespace: "default", Name: "job-0", Reason: "waiting for a seat", Explain: &report.Explanation{
		Seats: []report.LicenseSeats{{Feature: "MATLAB", Requested: 1, Issued: 10, HeldByPods: 6, CheckedOutElsewhere: 4}},
	}})
	r.Share = []report.ShareResult{{After: report.AfterObjects, Workload: "Deployment default/web", Policy: "web", Pods: 4, OnDemand: 1, Required: 2}}
	out, _ := render(t, Page{Runs: []report.Run{{Result: r}}})
	for _, want := range []string{"<td>MATLAB</td>", "<td>10</td><td>6</td><td>4</td><td>0</td>", "once the objects settled", `class="below"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestCSPAndNoExternalURL(t *testing.T) {
	r := tutorial()
	r.Pods[0].Explain = &report.Explanation{Scored: true, Chosen: "node-1", Candidates: []report.Candidate{{Node: "node-1", Chosen: true}}}
	out, doc := render(t, Page{Runs: []report.Run{{Config: "a", Result: r}, {Config: "b", Result: r}}, Expectations: []Expectation{{Name: "x", Passed: true}}})
	var csp string
	for _, m := range byTag(doc, "meta") {
		if attr(m, "http-equiv") == "Content-Security-Policy" {
			csp = attr(m, "content")
		}
	}
	if csp != "default-src 'none'; style-src 'unsafe-inline'; img-src data:" {
		t.Errorf("CSP meta %q", csp)
	}
	if strings.Contains(out, "http://") || strings.Contains(out, "https://") || len(byTag(doc, "script")) > 0 {
		t.Errorf("the page names an external URL or has a script")
	}
	for _, n := range all(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		for _, key := range []string{"src", "href"} {
			if v := attr(n, key); v != "" && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q>: not an anchor in the page", n.Data, key, v)
			}
		}
	}
}
