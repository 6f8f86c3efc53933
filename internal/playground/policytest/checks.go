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

package policytest

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// The checks of each kind of assertion, which evaluator.check dispatches to.

// checkNodes: every pod is bound to a selected node.
func (e *evaluator) checkNodes(pods []*report.PodResult, s *scenario.NodeSelector) *failure {
	allowed := sets.New(e.selectNodes(s)...)
	var bad []string
	f := &failure{}
	for _, p := range pods {
		switch {
		case p.Node == "":
			bad = append(bad, podName(p)+" is pending")
		case !allowed.Has(p.Node):
			bad = append(bad, podName(p)+" -> "+p.Node)
		default:
			continue
		}
		f.explain("", p)
	}
	if len(bad) == 0 {
		return nil
	}
	f.msg = fmt.Sprintf("%d of %d pods are not on %s: %s", len(bad), len(pods), describeNodes(s), listed(bad))
	return f
}

// checkUnschedulable: every pod is unbound, found unschedulable, and
// rejected as c says.
func checkUnschedulable(pods []*report.PodResult, c *scenario.UnschedulableCheck) *failure {
	var bad []string
	f := &failure{}
	for _, p := range pods {
		why := unschedulableMismatch(p, c)
		if why == "" {
			continue
		}
		bad = append(bad, podName(p)+" "+why)
		f.explain("", p)
	}
	if len(bad) == 0 {
		return nil
	}
	f.msg = fmt.Sprintf("%d of %d pods are not %s: %s", len(bad), len(pods), describeUnschedulable(c), listed(bad))
	return f
}

// unschedulableMismatch says why p is not unschedulable as c says, or "".
func unschedulableMismatch(p *report.PodResult, c *scenario.UnschedulableCheck) string {
	if p.Node != "" {
		return "-> " + p.Node
	}
	if !strings.HasPrefix(p.Reason, corev1.PodReasonUnschedulable) {
		return "is pending but not found unschedulable (" + p.Reason + ")"
	}
	if c.Plugin == "" && c.Rule == "" && c.Message == "" {
		return ""
	}
	if p.Explain == nil || p.Explain.Attempt == 0 {
		return "was not rejected by " + describeReject(c) + ": no scheduling attempt recorded"
	}
	// The reasons to search: the plugin's rejections, or all of them and
	// the pod's message.
	var reasons []string
	var plugins []string
	for _, g := range p.Explain.Filtered {
		plugins = append(plugins, g.Plugin)
		if c.Plugin == "" || g.Plugin == c.Plugin {
			reasons = append(reasons, g.Reason)
		}
	}
	if c.Plugin == "" {
		reasons = append(reasons, p.Reason)
	} else if !slices.Contains(plugins, c.Plugin) {
		return fmt.Sprintf("was not rejected by %s (rejected by %s)", c.Plugin, listed(slices.Compact(slices.Sorted(slices.Values(plugins)))))
	}
	has := func(s string) bool {
		return slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, s) })
	}
	if c.Rule != "" && !has(`"`+c.Rule+`"`) {
		return fmt.Sprintf("was not rejected by rule %q", c.Rule)
	}
	if c.Message != "" && !has(c.Message) {
		return fmt.Sprintf("was not rejected with %q", c.Message)
	}
	return ""
}

// perNode counts the bound pods on each of nodes.
func perNode(pods []*report.PodResult, nodes []string) map[string][]*report.PodResult {
	on := make(map[string][]*report.PodResult, len(nodes))
	for _, n := range nodes {
		on[n] = nil
	}
	for _, p := range pods {
		if _, counted := on[p.Node]; counted && p.Node != "" {
			on[p.Node] = append(on[p.Node], p)
		}
	}
	return on
}

func (e *evaluator) checkMaxPerNode(pods []*report.PodResult, s *scenario.NodeSelector, limit int) *failure {
	nodes := e.selectNodes(s)
	if len(nodes) == 0 {
		return &failure{msg: fmt.Sprintf("no node of the scenario matches %s", describeNodes(s))}
	}
	on := perNode(pods, nodes)
	var over []string
	f := &failure{}
	for _, n := range nodes {
		if len(on[n]) <= limit {
			continue
		}
		over = append(over, fmt.Sprintf("%s holds %d", n, len(on[n])))
		// The pods past the limit, as the result lists them.
		for _, p := range on[n][limit:] {
			f.explain("", p)
		}
	}
	if len(over) == 0 {
		return nil
	}
	f.msg = fmt.Sprintf("more than %d of the selected pods on a node: %s", limit, listed(over))
	return f
}

func (e *evaluator) checkMaxNodes(pods []*report.PodResult, s *scenario.NodeSelector, limit int) *failure {
	nodes := e.selectNodes(s)
	on := perNode(pods, nodes)
	var used []string
	for _, n := range nodes {
		if len(on[n]) > 0 {
			used = append(used, fmt.Sprintf("%s holds %d", n, len(on[n])))
		}
	}
	if len(used) <= limit {
		return nil
	}
	f := &failure{msg: fmt.Sprintf("the selected pods are on %d nodes, more than %d: %s", len(used), limit, listed(used))}
	// Why a pod went to another node than the first ones: the explanation
	// of the first pod on each node past the limit.
	seen := 0
	for _, n := range nodes {
		if len(on[n]) == 0 {
			continue
		}
		if seen++; seen > limit {
			f.explain("", on[n][0])
		}
	}
	return f
}

func (e *evaluator) checkSpread(pods []*report.PodResult, s *scenario.NodeSelector, limit int) *failure {
	nodes := e.selectNodes(s)
	if len(nodes) == 0 {
		return &failure{msg: fmt.Sprintf("no node of the scenario matches %s", describeNodes(s))}
	}
	on := perNode(pods, nodes)
	most, fewest := nodes[0], nodes[0]
	for _, n := range nodes {
		if len(on[n]) > len(on[most]) {
			most = n
		}
		if len(on[n]) < len(on[fewest]) {
			fewest = n
		}
	}
	spread := len(on[most]) - len(on[fewest])
	if spread <= limit {
		return nil
	}
	f := &failure{msg: fmt.Sprintf("spread %d, more than %d: %s holds %d of the selected pods, %s %d",
		spread, limit, most, len(on[most]), fewest, len(on[fewest]))}
	// Why the fullest node was chosen: its last pods' explanations.
	for i := len(on[most]) - 1; i >= 0; i-- {
		f.explain("", on[most][i])
	}
	return f
}

// checkMinOnNodes: at least m.Of(len(pods)) pods are bound to a selected
// node; the others are listed with where they are.
func (e *evaluator) checkMinOnNodes(pods []*report.PodResult, s *scenario.NodeSelector, m *scenario.MinOnNodes) *failure {
	allowed := sets.New(e.selectNodes(s)...)
	want := m.Of(len(pods))
	var elsewhere []*report.PodResult
	for _, p := range pods {
		if p.Node == "" || !allowed.Has(p.Node) {
			elsewhere = append(elsewhere, p)
		}
	}
	have := len(pods) - len(elsewhere)
	if have >= want {
		return nil
	}
	f := &failure{}
	var names []string
	for _, p := range elsewhere {
		where := " -> " + p.Node
		if p.Node == "" {
			where = " is pending"
		}
		names = append(names, podName(p)+where)
		f.explain("", p)
	}
	f.msg = fmt.Sprintf("%d of %d pods are on %s, want at least %d: %s", have, len(pods), describeNodes(s), want, listed(names))
	return f
}
