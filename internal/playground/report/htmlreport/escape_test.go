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

// hostile is markup a scenario, a config or an event may carry.
const hostile = `<script>alert(1)</script></svg><b x='1'>"><img src=x>`

// TestMarkupEscaped puts markup in every string the page shows and wants
// it back as text: the output holds none of it raw.
func TestMarkupEscaped(t *testing.T) {
	r := explained()
	r.Nodes[0].Name = "node-1" + hostile
	r.Nodes[0].Labels = map[string]string{hostile: hostile}
	r.Nodes[1].Taints, r.Nodes[1].Conditions, r.Nodes[1].Maintenance = []string{hostile}, []string{hostile}, hostile
	for i := range r.Pods {
		if r.Pods[i].Node == "node-1" {
			r.Pods[i].Node = r.Nodes[0].Name
		}
	}
	r.Pods[1].Name += hostile
	r.Pods[1].Object += hostile
	r.Pods = append(r.Pods, report.PodResult{Namespace: hostile, Name: "p" + hostile, Reason: "reason" + hostile})
	e := r.Pods[0].Explain
	e.Profile, e.Failure, e.Notes = hostile, hostile, []string{hostile}
	e.Candidates[1].Node = hostile
	e.Plugins[0].Name, e.Candidates[0].Scores[0].Plugin, e.Candidates[1].Scores[0].Plugin = hostile, hostile, hostile
	e.Filtered[0].Reason, e.Filtered[0].Nodes = hostile, []string{hostile}
	e.Seats = []report.LicenseSeats{{Feature: hostile}}
	r.Steps = []report.StepResult{{Step: hostile, Nodes: r.Nodes}}
	r.Share = []report.ShareResult{{After: hostile, Workload: hostile, Policy: hostile}}
	r.Karpenter = &report.KarpenterResult{NodePools: []string{hostile}, Nodes: []report.AddedNode{{Name: hostile, NodePool: hostile, Zone: hostile}}}
	p := Page{Title: hostile, GroupBy: hostile, Runs: []report.Run{{Config: hostile, Result: r}, {Config: hostile, Result: r}},
		Expectations: []Expectation{{Name: hostile, Message: hostile, Other: hostile,
			Pods: []string{"default/" + r.Pods[1].Name}, Failing: []string{"default/" + r.Pods[1].Name}}}}
	out, doc := render(t, p)
	// `"><` itself is the template's own: <img is what it would open.
	for _, raw := range []string{"<script", "</script", "<img", "<b ", "</svg><", "'1'"} {
		if strings.Contains(out, raw) {
			i := strings.Index(out, raw)
			t.Errorf("raw %q in the output: ...%s...", raw, out[max(0, i-80):min(len(out), i+80)])
		}
	}
	// The strings come back as text: the markup is shown, not run.
	body := text(byTag(doc, "body")[0])
	if n := strings.Count(body, hostile); n < 20 {
		t.Errorf("the strings are shown %d times, want at least 20", n)
	}
	titled := 0
	for _, pod := range byClass(doc, "pod") {
		if strings.Contains(attr(pod, "title"), hostile) {
			titled++
		}
	}
	if titled != 4 { // pods 1 and the unbound one, in both runs
		t.Errorf("%d pod titles hold the markup as text, want 4", titled)
	}
	marks := byClass(byClass(doc, "run")[0], "emark")
	if len(marks) != 1 || attr(marks[0], "title") != hostile+": failed: "+hostile {
		t.Errorf("want pod 1's expectation mark titled with the markup as text, got %d marks", len(marks))
	}
}
