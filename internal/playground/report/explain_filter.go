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
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

// filterResult is what an attempt's PreFilter and Filter plugins left.
type filterResult struct {
	// feasible is the number of nodes that passed every filter.
	feasible int
	// groups are the rejected nodes, grouped, largest group first.
	groups []FilterGroup
	// unseen are the scenario's nodes the attempt did not look at.
	unseen []string
}

// explainFilters groups the nodes the attempt rejected by stage, plugin,
// code and reason, and finds the scenario's nodes it did not evaluate.
func explainFilters(a schedtrace.Attempt, nodes []string, byNode func(x, y string) int) filterResult {
	var r filterResult
	groups := filterGroups{}
	seen := make(map[string]bool, len(nodes))
	for node, s := range a.Filter {
		seen[node] = true
		if s == nil {
			r.feasible++
			continue
		}
		groups.add("Filter", s, s.Plugin, node)
	}
	preFilterRejections(a, nodes, seen, groups)
	r.groups = groups.sorted(byNode)
	for _, n := range nodes {
		if !seen[n] {
			r.unseen = append(r.unseen, n)
		}
	}
	return r
}

// preFilterRejections adds to groups the nodes PreFilter rejected: every
// node when it rejected the pod, or the nodes its result left out, and
// marks them seen.
func preFilterRejections(a schedtrace.Attempt, nodes []string, seen map[string]bool, groups filterGroups) {
	switch {
	case a.PreFilter != nil:
		plugin := a.PreFilter.Plugin
		if plugin == "" {
			plugin = strings.Join(a.PreFilterPlugins, ",")
		}
		// The pod was rejected before any node was looked at: every
		// scenario node counts as seen, rejected by PreFilter.
		clear(seen)
		for _, n := range nodes {
			groups.add("PreFilter", a.PreFilter, plugin, n)
			seen[n] = true
		}
	case a.PreFilterNodes != nil:
		allowed := make(map[string]bool, len(a.PreFilterNodes))
		for _, n := range a.PreFilterNodes {
			allowed[n] = true
		}
		s := &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Reasons: []string{"not among the nodes the PreFilter result allows"}}
		plugin := strings.Join(a.PreFilterPlugins, ",")
		for _, n := range nodes {
			if !allowed[n] && !seen[n] {
				groups.add("PreFilter", s, plugin, n)
				seen[n] = true
			}
		}
	}
}

// filterGroups are the rejected nodes by stage, plugin, code and reason.
type filterGroups map[string]*FilterGroup

func (gs filterGroups) add(stage string, s *schedtrace.Status, plugin, node string) {
	g := FilterGroup{Stage: stage, Plugin: plugin, Code: s.Code, Reason: strings.Join(s.Reasons, "; ")}
	k := groupKey(g)
	if gs[k] == nil {
		gs[k] = &g
	}
	gs[k].Nodes = append(gs[k].Nodes, node)
}

func groupKey(g FilterGroup) string {
	return g.Stage + "\x00" + g.Plugin + "\x00" + g.Code + "\x00" + g.Reason
}

// sorted is the groups, largest first, each with its nodes in scenario
// order.
func (gs filterGroups) sorted(byNode func(x, y string) int) []FilterGroup {
	var out []FilterGroup
	for _, g := range gs {
		slices.SortFunc(g.Nodes, byNode)
		out = append(out, *g)
	}
	slices.SortFunc(out, func(x, y FilterGroup) int {
		if d := len(y.Nodes) - len(x.Nodes); d != 0 {
			return d
		}
		if c := strings.Compare(x.Stage+x.Plugin+x.Reason, y.Stage+y.Plugin+y.Reason); c != 0 {
			return c
		}
		// Only equal when put end to end, or but for the code: the whole
		// key, unique per group, keeps the order from depending on the map.
		return strings.Compare(groupKey(x), groupKey(y))
	})
	return out
}
