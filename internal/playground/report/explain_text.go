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

package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// explainLegend heads the explanations in text.
const explainLegend = "explanations (last scheduling attempt of each pod; score cells: normalized (weighted); * chosen node):"

// WriteExplainText writes the explanation of every pod of r that has one:
// a table per pod, score plugins down, candidate nodes across.
func WriteExplainText(w io.Writer, r Result) error {
	if _, err := fmt.Fprintln(w, explainLegend); err != nil {
		return err
	}
	for _, p := range r.Pods {
		if p.Explain == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s/%s -> %s\n", p.Namespace, p.Name, nodeOrNone(p.Node))
		if err := writeExplanation(w, p.Explain, "  "); err != nil {
			return err
		}
	}
	return nil
}

// WriteCompareExplainText writes, pod after pod, each run's explanation of
// the pod. Every run must come from the same scenario.
func WriteCompareExplainText(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, explainLegend); err != nil {
		return err
	}
	// Rows as in WriteCompareText: every pod of every run, by object.
	for _, row := range compareRows(runs) {
		fmt.Fprintf(w, "\n%s\n", row.label)
		for i, r := range runs {
			rp := row.pods[i]
			if rp == nil {
				fmt.Fprintf(w, "  [%d] %s -> -\n", i+1, r.Config)
				continue
			}
			fmt.Fprintf(w, "  [%d] %s -> %s\n", i+1, r.Config, nodeOrNone(rp.Node))
			if rp.Explain == nil {
				continue
			}
			if err := writeExplanation(w, rp.Explain, "      "); err != nil {
				return err
			}
		}
	}
	return nil
}

func nodeOrNone(node string) string {
	if node == "" {
		return "<none>"
	}
	return node
}

// WriteExplanation writes one pod's explanation as WriteExplainText does,
// each line starting with indent.
func WriteExplanation(w io.Writer, e *Explanation, indent string) error {
	return writeExplanation(w, e, indent)
}

func writeExplanation(w io.Writer, e *Explanation, indent string) error {
	if e.Attempt > 0 {
		fmt.Fprintf(w, "%sprofile %s, attempt %d: %d feasible node(s)\n", indent, e.Profile, e.Attempt, e.Feasible)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if e.Scored && len(e.Candidates) > 0 {
		line := indent + "plugin\tweight"
		for _, c := range e.Candidates {
			name := c.Node
			if c.Chosen {
				name = "*" + name
			}
			line += "\t" + name
		}
		fmt.Fprintln(tw, line)
		for i, p := range e.Plugins {
			line := fmt.Sprintf("%s%s\t%d", indent, p.Name, p.Weight)
			for _, c := range e.Candidates {
				cell := "-"
				if i < len(c.Scores) && c.Scores[i].Plugin == p.Name {
					cell = fmt.Sprintf("%d (%d)", c.Scores[i].Normalized, c.Scores[i].Weighted)
				}
				line += "\t" + cell
			}
			fmt.Fprintln(tw, line)
		}
		line = indent + "total\t"
		for _, c := range e.Candidates {
			line += fmt.Sprintf("\t%d", c.Total)
		}
		fmt.Fprintln(tw, line)
		if err := tw.Flush(); err != nil {
			return err
		}
		if e.Feasible > len(e.Candidates) {
			fmt.Fprintf(w, "%s(%d more feasible node(s) not shown)\n", indent, e.Feasible-len(e.Candidates))
		}
	}
	if len(e.Filtered) > 0 {
		fmt.Fprintf(w, "%sfiltered out:\n", indent)
		for _, g := range e.Filtered {
			fmt.Fprintf(tw, "%s  %s %s\t%s\t%s\t%s\n", indent, g.Stage, g.Plugin, g.Code, g.Reason, strings.Join(g.Nodes, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, seats := range e.Seats {
		fmt.Fprintf(w, "%sseats: %s\n", indent, seats)
	}
	if e.Failure != "" {
		fmt.Fprintf(w, "%sfailure: %s\n", indent, e.Failure)
	}
	for _, n := range e.Notes {
		fmt.Fprintf(w, "%snote: %s\n", indent, n)
	}
	return nil
}
