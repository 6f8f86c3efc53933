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
	"slices"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

// scoreResult is what an attempt's score plugins computed.
type scoreResult struct {
	// plugins are the plugins that scored, in the framework's order.
	plugins []PluginWeight
	// candidates are the best nodes, at most top, the chosen one always.
	candidates []Candidate
	// skipped are the profile's score plugins that did not score the pod
	// (their PreScore skipped it), by name.
	skipped []string
}

// explainScores ranks the scored nodes of the attempt, best first, and
// keeps the top of them.
func explainScores(a schedtrace.Attempt, top int, byNode func(x, y string) int) scoreResult {
	var r scoreResult
	cands := candidates(a)
	if len(cands) > 0 {
		for _, p := range cands[0].Scores {
			r.plugins = append(r.plugins, PluginWeight{Name: p.Plugin, Weight: p.Weight})
		}
	}
	for name := range a.Weights {
		if !slices.ContainsFunc(r.plugins, func(p PluginWeight) bool { return p.Name == name }) {
			r.skipped = append(r.skipped, name)
		}
	}
	slices.Sort(r.skipped)
	rankCandidates(cands, byNode)
	r.candidates = topCandidates(cands, top)
	return r
}

// candidates is every scored node of the attempt, with each plugin's
// normalized score recovered from its weighted one.
func candidates(a schedtrace.Attempt) []Candidate {
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
	return cands
}

// rankCandidates sorts cands by total, highest first, the chosen node
// first among equal totals, then in scenario order.
func rankCandidates(cands []Candidate, byNode func(x, y string) int) {
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
}

// topCandidates is the first top of ranked cands; when the chosen node is
// not among them, it takes the last place.
func topCandidates(cands []Candidate, top int) []Candidate {
	if len(cands) <= top {
		return cands
	}
	i := slices.IndexFunc(cands, func(c Candidate) bool { return c.Chosen })
	if i >= top {
		return append(cands[:top-1], cands[i])
	}
	return cands[:top]
}
