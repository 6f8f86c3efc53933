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

// heatLevels is how many background intensities a score cell has
// (classes h0..h5): the cell's weighted score over the table's highest.
const heatLevels = 5

type explainView struct {
	ID, PodID string // PodID is "" when the pod has no block (compact)
	Pod, Node string
	E         *report.Explanation
	Heads     []report.Candidate // the table's columns, best first
	Rows      []heatRow
	More      int // feasible nodes not in the table
}

type heatRow struct {
	Plugin string
	Weight int
	Cells  []heatCell
}

type heatCell struct {
	Weighted, Normalized int64
	Level                int
	Missing, Chosen      bool
}

// explanations are the explained pods of run, in pod order.
func explanations(run int, r report.Result, compact bool) []explainView {
	var out []explainView
	for i, p := range r.Pods {
		if p.Explain == nil {
			continue
		}
		ev := explainView{ID: explainID(run, i), Pod: p.Namespace + "/" + p.Name, Node: p.Node, E: p.Explain, Heads: p.Explain.Candidates}
		if !compact || p.Node == "" {
			ev.PodID = podID(run, i)
		}
		if p.Explain.Scored {
			ev.Rows = heatmap(p.Explain)
		}
		ev.More = max(0, p.Explain.Feasible-len(p.Explain.Candidates))
		out = append(out, ev)
	}
	return out
}

// heatmap is the score table: a row per plugin, a cell per candidate.
func heatmap(e *report.Explanation) []heatRow {
	var top int64 = 1
	for _, c := range e.Candidates {
		for _, s := range c.Scores {
			top = max(top, s.Weighted)
		}
	}
	rows := make([]heatRow, 0, len(e.Plugins))
	for i, pw := range e.Plugins {
		row := heatRow{Plugin: pw.Name, Weight: pw.Weight, Cells: make([]heatCell, 0, len(e.Candidates))}
		for _, c := range e.Candidates {
			if i >= len(c.Scores) || c.Scores[i].Plugin != pw.Name {
				row.Cells = append(row.Cells, heatCell{Missing: true, Chosen: c.Chosen})
				continue
			}
			s := c.Scores[i]
			level := int(max(0, s.Weighted) * heatLevels / top)
			row.Cells = append(row.Cells, heatCell{Weighted: s.Weighted, Normalized: s.Normalized, Level: level, Chosen: c.Chosen})
		}
		rows = append(rows, row)
	}
	return rows
}
