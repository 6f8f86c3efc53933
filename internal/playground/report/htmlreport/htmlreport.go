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

// Package htmlreport writes a playground run as one self-contained HTML
// file: the cluster as node columns of pods, each step as a frame, runs
// side by side, each explained pod's scores as a heatmap. It renders the
// same report.Result the text and JSON renderers do. The page loads
// nothing (its Content-Security-Policy forbids it) and runs no script.
package htmlreport

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// Beyond CompactNodes nodes or CompactPods pods in a run, the nodes are
// drawn as count bars without a block per pod: at 5,000 nodes and 50,000
// pods the blocks alone would make a page of several megabytes that a
// browser lays out slowly.
const (
	CompactNodes = 500
	CompactPods  = 20000
)

// Page is one report: a run, or several runs of one scenario (--compare).
type Page struct {
	Title        string        // e.g. the scenario file's base name
	Runs         []report.Run  // one, or several with --compare (Config names each)
	GroupBy      string        // node label key to group node columns by; "" = no grouping
	Expectations []Expectation // playground test results; nil for a plain run
}

// Expectation is one expectation of `playground test` and its outcome.
type Expectation struct {
	Name    string
	Passed  bool
	Message string
	// Pods are the pods (namespace/name) it concerned, marked on the first
	// run's picture; MorePods counts those not listed.
	Pods     []string
	MorePods int
	// Failing are those of them that broke it; MoreFailing counts those
	// not listed.
	Failing     []string
	MoreFailing int
	// At is "" when Pods are of the first run's end; otherwise when they
	// were taken (after a step): they are not marked.
	At string
	// Other is another run's config that the expectation compared the
	// first run with: its pods are not in Pods.
	Other string
}

//go:embed report.html.tmpl
var pageSource string

// page is parsed once; html/template escapes every value by its context.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"join": strings.Join,
	// An explanation's filtered table names at most listedNodes nodes per
	// reason: a pod rejected everywhere on 5,000 nodes would otherwise add
	// 5,000 names, and the page grew to 71 MB with 500 such pods.
	"first": func(s []string) []string { return s[:min(len(s), listedNodes)] },
	"rest":  func(s []string) int { return max(0, len(s)-listedNodes) },
}).Parse(pageSource))

// listedNodes is how many node names a filtered reason lists.
const listedNodes = 20

// Write writes p as one HTML document.
func Write(w io.Writer, p Page) error {
	return page.Execute(w, build(p, CompactNodes, CompactPods))
}

// view is what the template renders: every number computed here, every
// string passed as data for the template to escape.
type view struct {
	Title         string
	Expectations  []expectView
	ExpectNotes   []string
	Marked        bool // some pod block carries an expectation's mark
	Failed        int
	Compare       bool
	Compact       bool
	Threshold     int
	ThresholdPods int
	GroupBy       string
	GroupNote     string
	Runs          []runView
	Moved         []movedRow
	MovedMore     int
}

type runView struct {
	N           int // 1-based
	Config      string
	Spread      int
	Pods        int
	Groups      []groupView
	Unscheduled []podView
	Reasons     []reasonCount // compact runs: unscheduled pods by reason
	Karpenter   *report.KarpenterResult
	Steps       []stepView
	Explained   []explainView
	Seats       []seatRow
	Share       []shareRow
}

// build turns p into its view; beyond compactNodes nodes or compactPods
// pods in a run, every run's nodes are count bars.
func build(p Page, compactNodes, compactPods int) view {
	v := view{Title: p.Title, Compare: len(p.Runs) > 1, Threshold: compactNodes, ThresholdPods: compactPods, GroupBy: p.GroupBy}
	for _, e := range p.Expectations {
		if !e.Passed {
			v.Failed++
		}
	}
	for _, r := range p.Runs {
		v.Compact = v.Compact || len(r.Result.Nodes)+addedCount(r.Result) > compactNodes || len(r.Result.Pods) > compactPods
	}
	var marks map[int][]podMark
	v.Expectations, marks, v.ExpectNotes = expectMarks(p.Expectations, p.Runs, v.Compact)
	v.Marked = len(marks) > 0
	moved := movedPods(p.Runs)
	v.Moved, v.MovedMore = movedTable(p.Runs)
	for i, r := range p.Runs {
		rv := runView{N: i + 1, Config: r.Config, Spread: r.Result.Spread, Pods: len(r.Result.Pods), Karpenter: r.Result.Karpenter}
		var note string
		var runMarks map[int][]podMark
		if i == 0 {
			runMarks = marks
		}
		rv.Groups, rv.Unscheduled, note = cluster(i, r.Result, p.GroupBy, moved[i], runMarks, v.Compact)
		if note != "" {
			v.GroupNote = note
		}
		if v.Compact {
			rv.Reasons = byReason(rv.Unscheduled)
			rv.Unscheduled = nil
		}
		rv.Steps = steps(r.Result.Steps, v.Compact)
		rv.Explained = explanations(i, r.Result, v.Compact)
		rv.Seats = seats(i, r.Result)
		rv.Share = shares(r.Result.Share)
		v.Runs = append(v.Runs, rv)
	}
	return v
}

func addedCount(r report.Result) int {
	if r.Karpenter == nil {
		return 0
	}
	return len(r.Karpenter.Nodes)
}
