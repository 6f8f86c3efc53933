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

package playground

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

// DefaultExplainNodes is how many candidate nodes an Explanation lists when
// Options.ExplainNodes is 0.
const DefaultExplainNodes = 5

// Explanation says why the scheduler put a pod on its node, or found none:
// what the scheduling framework computed in the pod's last scheduling
// attempt, recorded as the framework returned it (see package schedtrace).
type Explanation struct {
	// Profile is the scheduler name of the profile that scheduled the pod.
	Profile string `json:"profile"`
	// Attempt is the number of the explained attempt, the pod's last: 1
	// for the first. 0 when no attempt was recorded (see Notes).
	Attempt int `json:"attempt"`
	// Chosen is the node the scheduler chose in that attempt, empty if it
	// chose none.
	Chosen string `json:"chosen,omitempty"`
	// Feasible is the number of nodes that passed every filter.
	Feasible int `json:"feasible"`
	// Scored is false when the score plugins did not run: with a single
	// feasible node the scheduler takes it unscored.
	Scored bool `json:"scored"`
	// Plugins are the score plugins that scored the pod, in the
	// framework's order, with their weights.
	Plugins []PluginWeight `json:"plugins,omitempty"`
	// Candidates are the feasible nodes with the highest totals, best
	// first (the chosen node first among equal totals), at most
	// Options.ExplainNodes of them. The chosen node is always listed.
	Candidates []Candidate `json:"candidates,omitempty"`
	// Filtered are the nodes that PreFilter or Filter rejected, grouped by
	// plugin and reason, largest group first.
	Filtered []FilterGroup `json:"filtered,omitempty"`
	// Failure is the scheduler's message when the attempt failed.
	Failure string `json:"failure,omitempty"`
	// Notes are remarks on the attempt, in English.
	Notes []string `json:"notes,omitempty"`
}

// PluginWeight is a score plugin and its weight in the profile.
type PluginWeight struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// Candidate is a feasible node and its scores.
type Candidate struct {
	Node string `json:"node"`
	// Chosen marks the node the scheduler chose.
	Chosen bool `json:"chosen,omitempty"`
	// Scores are one per plugin of Explanation.Plugins, in that order;
	// empty when Explanation.Scored is false.
	Scores []PluginScore `json:"scores,omitempty"`
	// Total is the framework's total score of the node: the sum of
	// Scores[*].Weighted.
	Total int64 `json:"total"`
}

// PluginScore is one plugin's score for a node.
type PluginScore struct {
	Plugin string `json:"plugin"`
	// Raw is what the plugin's Score returned.
	Raw int64 `json:"raw"`
	// Normalized is the score after the plugin's NormalizeScore (Raw if it
	// has none), between 0 and 100.
	Normalized int64 `json:"normalized"`
	// Weight is the plugin's weight in the profile.
	Weight int `json:"weight"`
	// Weighted is Normalized * Weight, what the total adds up.
	Weighted int64 `json:"weighted"`
}

// FilterGroup is a set of nodes rejected for the same reason.
type FilterGroup struct {
	// Stage is PreFilter (the pod was rejected before any node was
	// looked at, or the PreFilter result left these nodes out) or Filter.
	Stage string `json:"stage"`
	// Plugin is the rejecting plugin (several, comma-separated, when the
	// PreFilter result of several left the nodes out).
	Plugin string `json:"plugin"`
	// Code is the status code: Unschedulable or
	// UnschedulableAndUnresolvable (or Error).
	Code string `json:"code"`
	// Reason is the status' reasons, joined by "; ".
	Reason string `json:"reason"`
	// Nodes are the rejected nodes, in scenario order.
	Nodes []string `json:"nodes"`
}

// explain builds the Explanation of a pod's attempt. nodes are the
// scenario's nodes in file order, bound the node the pod is bound to (empty
// if none), top the number of candidates to list.
func explain(a schedtrace.Attempt, found bool, nodes []string, bound string, top int) *Explanation {
	if !found {
		e := &Explanation{Notes: []string{"no scheduling attempt was recorded: the pod was created with spec.nodeName, or the scheduler never tried it"}}
		return e
	}
	if top <= 0 {
		top = DefaultExplainNodes
	}
	e := &Explanation{Profile: a.Profile, Attempt: a.Number, Chosen: a.Reserved, Failure: a.Failure}
	order := make(map[string]int, len(nodes))
	for i, n := range nodes {
		order[n] = i
	}
	byNode := func(x, y string) int {
		ix, okx := order[x]
		iy, oky := order[y]
		switch {
		case okx && oky:
			return ix - iy
		case okx != oky: // scenario nodes first
			if okx {
				return -1
			}
			return 1
		default:
			return strings.Compare(x, y)
		}
	}

	// Filters.
	groups := map[string]*FilterGroup{}
	add := func(stage string, s *schedtrace.Status, plugin, node string) {
		g := FilterGroup{Stage: stage, Plugin: plugin, Code: s.Code, Reason: strings.Join(s.Reasons, "; ")}
		k := g.Stage + "\x00" + g.Plugin + "\x00" + g.Code + "\x00" + g.Reason
		if groups[k] == nil {
			groups[k] = &g
		}
		groups[k].Nodes = append(groups[k].Nodes, node)
	}
	var feasible []string
	seen := map[string]bool{}
	for node, s := range a.Filter {
		seen[node] = true
		if s == nil {
			feasible = append(feasible, node)
			continue
		}
		add("Filter", s, s.Plugin, node)
	}
	e.Feasible = len(feasible)
	switch {
	case a.PreFilter != nil:
		plugin := a.PreFilter.Plugin
		if plugin == "" {
			plugin = strings.Join(a.PreFilterPlugins, ",")
		}
		for _, n := range nodes {
			add("PreFilter", a.PreFilter, plugin, n)
		}
		clear(seen)
		for _, n := range nodes {
			seen[n] = true
		}
	case a.PreFilterNodes != nil:
		allowed := map[string]bool{}
		for _, n := range a.PreFilterNodes {
			allowed[n] = true
		}
		s := &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Reasons: []string{"not among the nodes the PreFilter result allows"}}
		for _, n := range nodes {
			if !allowed[n] && !seen[n] {
				add("PreFilter", s, strings.Join(a.PreFilterPlugins, ","), n)
				seen[n] = true
			}
		}
	}
	for _, g := range groups {
		slices.SortFunc(g.Nodes, byNode)
		e.Filtered = append(e.Filtered, *g)
	}
	slices.SortFunc(e.Filtered, func(x, y FilterGroup) int {
		if d := len(y.Nodes) - len(x.Nodes); d != 0 {
			return d
		}
		return strings.Compare(x.Stage+x.Plugin+x.Reason, y.Stage+y.Plugin+y.Reason)
	})
	var unseen []string
	for _, n := range nodes {
		if !seen[n] {
			unseen = append(unseen, n)
		}
	}
	if len(unseen) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): %s", strings.Join(unseen, ", ")))
	}

	// Scores.
	if a.Scores != nil {
		e.Scored = true
		var cands []Candidate
		for _, ns := range a.Scores {
			c := Candidate{Node: ns.Node, Chosen: ns.Node == a.Reserved, Total: ns.Total}
			for _, p := range ns.Plugins {
				w := a.Weights[p.Plugin]
				if w == 0 {
					w = 1
				}
				c.Scores = append(c.Scores, PluginScore{Plugin: p.Plugin, Raw: p.Raw, Normalized: p.Weighted / int64(w), Weight: w, Weighted: p.Weighted})
			}
			cands = append(cands, c)
		}
		if len(cands) > 0 {
			for _, p := range cands[0].Scores {
				e.Plugins = append(e.Plugins, PluginWeight{Name: p.Plugin, Weight: p.Weight})
			}
		}
		var skipped []string
		for name := range a.Weights {
			if !slices.ContainsFunc(e.Plugins, func(p PluginWeight) bool { return p.Name == name }) {
				skipped = append(skipped, name)
			}
		}
		if len(skipped) > 0 {
			slices.Sort(skipped)
			e.Notes = append(e.Notes, "score plugins skipped for this pod by their PreScore: "+strings.Join(skipped, ", "))
		}
		slices.SortFunc(cands, func(x, y Candidate) int {
			switch {
			case x.Total != y.Total:
				if x.Total > y.Total {
					return -1
				}
				return 1
			case x.Chosen != y.Chosen:
				if x.Chosen {
					return -1
				}
				return 1
			}
			return byNode(x.Node, y.Node)
		})
		if len(cands) > top {
			i := slices.IndexFunc(cands, func(c Candidate) bool { return c.Chosen })
			if i >= top {
				cands = append(cands[:top-1], cands[i])
			} else {
				cands = cands[:top]
			}
		}
		e.Candidates = cands
	} else if a.Reserved != "" {
		e.Candidates = []Candidate{{Node: a.Reserved, Chosen: true}}
		if e.Feasible == 1 {
			e.Notes = append(e.Notes, "the only feasible node: the scheduler takes it without scoring")
		}
	}
	if a.Nominated != "" {
		e.Notes = append(e.Notes, fmt.Sprintf("preemption (PostFilter) nominated node %s", a.Nominated))
	}
	if bound != "" && bound != a.Reserved {
		e.Notes = append(e.Notes, fmt.Sprintf("bound to %s, but the last recorded attempt chose %q", bound, a.Reserved))
	}
	return e
}

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
	if e.Failure != "" {
		fmt.Fprintf(w, "%sfailure: %s\n", indent, e.Failure)
	}
	for _, n := range e.Notes {
		fmt.Fprintf(w, "%snote: %s\n", indent, n)
	}
	return nil
}
