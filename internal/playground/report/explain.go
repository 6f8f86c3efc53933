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
	"encoding/json"
	"fmt"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// DefaultExplainNodes is how many candidate nodes Explain lists when its
// top is 0 or less.
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
	// top of them (see Explain). The chosen node is always listed.
	Candidates []Candidate `json:"candidates,omitempty"`
	// Filtered are the nodes that PreFilter or Filter rejected, grouped by
	// plugin and reason, largest group first.
	Filtered []FilterGroup `json:"filtered,omitempty"`
	// Seats are, for a pod left waiting that asks for license seats of a
	// scenario's licenses, each feature's seats when the run ended.
	Seats []LicenseSeats `json:"seats,omitempty"`
	// Failure is the scheduler's message when the attempt failed.
	Failure string `json:"failure,omitempty"`
	// Notes are remarks on the attempt, in English.
	Notes []string `json:"notes,omitempty"`
	// NoRawScores, when set, says why the candidates' scores have no raw
	// score (kubeversion.RawScores). The text output prints no raw scores.
	NoRawScores string `json:"noRawScores,omitempty"`
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
	// Raw is what the plugin's Score returned. Where the framework does
	// not report it (kubeversion.RawScores) it is 0 and left out of JSON,
	// and Explanation.NoRawScores says so.
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

// Explain builds the Explanation of a pod's attempt; found is false when
// no attempt of the pod was recorded. nodes are the scenario's nodes in
// file order, bound the node the pod is bound to (empty if none), top the
// number of candidates to list (DefaultExplainNodes when 0 or less).
func Explain(a schedtrace.Attempt, found bool, nodes []string, bound string, top int) *Explanation {
	if !found {
		return &Explanation{Notes: []string{"no scheduling attempt was recorded: the pod was created with spec.nodeName, or the scheduler never tried it"}}
	}
	if top <= 0 {
		top = DefaultExplainNodes
	}
	e := &Explanation{Profile: a.Profile, Attempt: a.Number, Chosen: a.Reserved, Failure: a.Failure}
	byNode := nodeOrder(nodes)

	f := explainFilters(a, nodes, byNode)
	e.Feasible, e.Filtered = f.feasible, f.groups
	if len(f.unseen) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("not evaluated in this attempt (a nominated node was tried first, or enough feasible nodes were found): %s", strings.Join(f.unseen, ", ")))
	}

	switch {
	case a.Scores != nil:
		s := explainScores(a, top, byNode)
		e.Scored, e.Plugins, e.Candidates = true, s.plugins, s.candidates
		if len(s.skipped) > 0 {
			e.Notes = append(e.Notes, "score plugins skipped for this pod by their PreScore: "+strings.Join(s.skipped, ", "))
		}
	case a.Reserved != "":
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
	if e.Scored && !kubeversion.Has(kubeversion.RawScores) {
		e.NoRawScores = noRawScores
	}
	return e
}

// noRawScores is Explanation.NoRawScores where the minor lacks raw scores.
var noRawScores = "raw scores unavailable: " + kubeversion.Unavailable(kubeversion.RawScores).Error()

// MarshalJSON leaves raw out where the framework does not report raw
// scores (kubeversion.RawScores): a zero there would be made up.
func (p PluginScore) MarshalJSON() ([]byte, error) {
	type plain PluginScore
	if kubeversion.Has(kubeversion.RawScores) {
		return json.Marshal(plain(p))
	}
	// The outer, shallower raw hides plain's.
	return json.Marshal(struct {
		plain
		Raw *int64 `json:"raw,omitempty"`
	}{plain: plain(p)})
}

// nodeOrder compares node names by their place in nodes (the scenario's
// file order); nodes not in it come after, by name.
func nodeOrder(nodes []string) func(x, y string) int {
	order := make(map[string]int, len(nodes))
	for i, n := range nodes {
		order[n] = i
	}
	return func(x, y string) int {
		ix, okx := order[x]
		iy, oky := order[y]
		switch {
		case okx && oky:
			return ix - iy
		case okx != oky:
			if okx {
				return -1
			}
			return 1
		default:
			return strings.Compare(x, y)
		}
	}
}
