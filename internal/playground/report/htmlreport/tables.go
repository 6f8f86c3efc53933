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

import "github.com/adminsched/scheduler-plugins/internal/playground/report"

// Step frames draw a bar per node: a labelled row each (stepRow pixels
// high, at most stepBar wide), or in a compact run one unlabelled column
// each.
const (
	stepRow = 16
	stepBar = 300
)

type stepView struct {
	Step    string
	Waiting int
	Evicted *int
	Bars    []barView
	Height  int // the SVG's height
	Width   int // compact: the number of bars
}

type barView struct {
	Name         string
	Pods         int
	X, Y, W, H   int
	TextX, TextY int
}

// steps are the frames of the scenario's steps, bars scaled to the
// fullest node of any step so that frames compare.
func steps(in []report.StepResult, compact bool) []stepView {
	top := 1
	for _, s := range in {
		for _, n := range s.Nodes {
			top = max(top, n.Pods)
		}
	}
	out := make([]stepView, 0, len(in))
	for _, s := range in {
		sv := stepView{Step: s.Step, Waiting: s.Waiting, Evicted: s.Evicted, Bars: make([]barView, 0, len(s.Nodes))}
		for i, n := range s.Nodes {
			b := barView{Name: n.Name, Pods: n.Pods}
			if compact {
				b.H = barLen(n.Pods, top, barHeight)
				b.X, b.Y, b.W = i, barHeight-b.H, 1
			} else {
				b.W = barLen(n.Pods, top, stepBar)
				b.Y, b.H = i*stepRow, stepRow-4
				b.TextX, b.TextY = b.W+4, i*stepRow+stepRow-5
			}
			sv.Bars = append(sv.Bars, b)
		}
		sv.Height, sv.Width = len(s.Nodes)*stepRow, len(s.Nodes)
		if compact {
			sv.Height = barHeight
		}
		out = append(out, sv)
	}
	return out
}

type seatRow struct {
	Pod, Explain string
	Seats        report.LicenseSeats
	Free         int
}

// seats are the license seats of the pods whose explanation has some:
// the pods left waiting for a seat.
func seats(run int, r report.Result) []seatRow {
	var out []seatRow
	for i, p := range r.Pods {
		if p.Explain == nil {
			continue
		}
		for _, s := range p.Explain.Seats {
			out = append(out, seatRow{Pod: p.Namespace + "/" + p.Name, Explain: explainID(run, i), Seats: s, Free: s.Free()})
		}
	}
	return out
}

type shareRow struct {
	report.ShareResult
	When  string
	Below bool
}

func shares(in []report.ShareResult) []shareRow {
	out := make([]shareRow, 0, len(in))
	for _, s := range in {
		after := "after " + s.After
		if s.After == report.AfterObjects {
			after = "once the objects settled"
		}
		out = append(out, shareRow{ShareResult: s, When: after, Below: s.OnDemand < s.Required})
	}
	return out
}
