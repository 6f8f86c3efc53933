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

// Package policytest evaluates a scenario's expect assertions against the
// results of its runs (`playground test`), and writes the outcomes as text
// and JUnit XML. It is pure: it reads a Plan and report.Results.
//
// A failure names the pods concerned, where each landed (or that it is
// pending) and why: the explanation of its last scheduling attempt, as
// `playground --explain` prints it. Every message is bounded: at most
// MaxListed items are named, and at most MaxExplained explanations given.
package policytest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// Bounds of a failure's text.
const (
	// MaxListed is how many pods or nodes a failure's message names.
	MaxListed = 5
	// MaxExplained is how many pods' explanations a failure gives.
	MaxExplained = 3
)

// Outcome is the result of one assertion.
type Outcome struct {
	// Index is the assertion's index in expect.
	Index int
	// Name is the assertion's name, or a description made from it.
	Name   string
	Passed bool
	// Message says, in one line, what did not hold.
	Message string
	// Details are the explanations of the pods concerned, several lines.
	Details string
}

// Input is what Evaluate reads.
type Input struct {
	// Plan is the scenario's plan; its Scenario.Expect are evaluated.
	Plan *scenario.Plan
	// Nodes are the scenario's nodes (Plan.NodeObjects), for their labels.
	Nodes []*corev1.Node
	// Config names the scheduler config of Result, in messages.
	Config string
	// Result is the run under the scenario's scheduler config.
	Result report.Result
	// Others are the runs under the configs of samePlacementsAs, by the
	// config as the assertion writes it.
	Others map[string]report.Result
	// OtherNames name those configs in messages (the path as resolved),
	// by the config as the assertion writes it; without one, as written.
	OtherNames map[string]string
}

// Evaluate checks every assertion of in.Plan.Scenario.Expect.
func Evaluate(in Input) []Outcome {
	e := &evaluator{in: in, nodeLabels: map[string]labels.Set{}}
	for _, n := range in.Nodes {
		e.nodeNames = append(e.nodeNames, n.Name)
		e.nodeLabels[n.Name] = n.Labels
	}
	var out []Outcome
	for i := range in.Plan.Scenario.Expect {
		a := &in.Plan.Scenario.Expect[i]
		o := Outcome{Index: i, Name: a.Name}
		if o.Name == "" {
			o.Name = Describe(a)
		}
		o.Message, o.Details = e.check(a)
		o.Passed = o.Message == ""
		out = append(out, o)
	}
	return out
}

type evaluator struct {
	in         Input
	nodeNames  []string
	nodeLabels map[string]labels.Set
}

// failure is a message and the explanations of the pods it names.
type failure struct {
	msg     string
	details bytes.Buffer
	shown   int
}

// explain adds pod's explanation, up to MaxExplained of them.
func (f *failure) explain(run string, p *report.PodResult) {
	if f.shown >= MaxExplained {
		return
	}
	f.shown++
	where := "-> " + p.Node
	if p.Node == "" {
		where = "pending: " + p.Reason
	}
	if run != "" {
		where += " (under " + run + ")"
	}
	fmt.Fprintf(&f.details, "%s/%s %s\n", p.Namespace, p.Name, where)
	if p.Explain == nil {
		f.details.WriteString("  no scheduling attempt recorded\n")
		return
	}
	_ = report.WriteExplanation(&f.details, p.Explain, "  ")
}

func (e *evaluator) check(a *scenario.Assertion) (string, string) {
	pods := e.selectPods(&e.in.Result, a.Pods)
	if len(pods) == 0 {
		return fmt.Sprintf("no pod of the result matches %s", describePods(a.Pods)), ""
	}
	var f *failure
	switch {
	case a.Unschedulable != nil:
		f = checkUnschedulable(pods, a.Unschedulable)
	case a.MaxPodsPerNode != nil:
		f = e.checkMaxPerNode(pods, a.Nodes, *a.MaxPodsPerNode)
	case a.MaxNodeCount != nil:
		f = e.checkMaxNodes(pods, a.Nodes, *a.MaxNodeCount)
	case a.MaxSpread != nil:
		f = e.checkSpread(pods, a.Nodes, *a.MaxSpread)
	case a.SamePlacementsAs != nil:
		f = e.checkSame(a, pods)
	default:
		f = e.checkNodes(pods, a.Nodes)
	}
	if f == nil {
		return "", ""
	}
	return f.msg, f.details.String()
}

// selectPods returns the pods of r that s selects, in result order.
func (e *evaluator) selectPods(r *report.Result, s *scenario.PodSelector) []*report.PodResult {
	sel := s.LabelSelector()
	var out []*report.PodResult
	for i := range r.Pods {
		p := &r.Pods[i]
		if s != nil {
			if s.Namespace != "" && p.Namespace != s.Namespace {
				continue
			}
			if o := s.Object; o != nil && (p.Object != o.Kind+"/"+o.Name || p.Namespace != orDefault(s.Namespace)) {
				continue
			}
		}
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func orDefault(ns string) string {
	if ns == "" {
		return scenario.DefaultNamespace
	}
	return ns
}

// selectNodes returns the names of the scenario's nodes s selects, in
// scenario order.
func (e *evaluator) selectNodes(s *scenario.NodeSelector) []string {
	sel := s.LabelSelector()
	var out []string
	for _, n := range e.nodeNames {
		if s != nil && len(s.Names) > 0 && !slices.Contains(s.Names, n) {
			continue
		}
		if sel.Matches(e.nodeLabels[n]) {
			out = append(out, n)
		}
	}
	return out
}

// listed joins at most MaxListed items, saying how many more there are.
func listed(items []string) string {
	if len(items) <= MaxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:MaxListed], ", "), len(items)-MaxListed)
}

func podName(p *report.PodResult) string { return p.Namespace + "/" + p.Name }

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
