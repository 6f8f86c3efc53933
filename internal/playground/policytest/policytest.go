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

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Bounds of a failure's text.
const (
	// MaxListed is how many pods or nodes a failure's message names.
	MaxListed = 5
	// MaxExplained is how many pods' explanations a failure gives.
	MaxExplained = 3
	// MaxMarked is how many pods an outcome's Pods and Failing hold: the
	// HTML report marks them on its picture, and an assertion over 50,000
	// pods must not keep 50,000 names per outcome.
	MaxMarked = 1000
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
	// Pods are the pods (namespace/name) the assertion selected, in
	// result order, at most MaxMarked; MorePods counts the others.
	Pods     []string
	MorePods int
	// Failing are those of Pods its failure names (the pods it explains
	// the failure by), at most MaxMarked; MoreFailing counts the others.
	Failing     []string
	MoreFailing int
	// At is "" when Pods and Failing are the scenario's pods at the end of
	// its run under its own config; otherwise when they were taken, as
	// messages say it ("after step 2 (...)", "once the objects settled"):
	// a picture of the end would show other pods, or the same pods
	// elsewhere.
	At string
	// Other is the samePlacementsAs config (as messages name it) whose
	// pods the assertion compared with: Pods and Failing hold none of
	// them, only those of the scenario's own config.
	Other string
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
		e.check(a, &o)
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

// failure is a message, the explanations of the pods it names, and those
// pods of the scenario's own run.
type failure struct {
	msg         string
	details     bytes.Buffer
	shown       int
	failing     []string
	moreFailing int
}

// explain adds pod's explanation, up to MaxExplained of them, and counts
// pod as failing the assertion. run, when set, is the config the text
// names beside the pod ("under <config>"); the pod is of the scenario's
// own run.
func (f *failure) explain(run string, p *report.PodResult) {
	if len(f.failing) < MaxMarked {
		f.failing = append(f.failing, podName(p))
	} else {
		f.moreFailing++
	}
	f.explainOnly(run, p)
}

// explainOther adds the explanation of a pod of another run (a
// samePlacementsAs config): the report cannot mark it on the picture of
// the scenario's own run.
func (f *failure) explainOther(run string, p *report.PodResult) { f.explainOnly(run, p) }

func (f *failure) explainOnly(run string, p *report.PodResult) {
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

// check sets o's Message (empty when a holds), Details and the pods it
// concerned.
func (e *evaluator) check(a *scenario.Assertion, o *Outcome) {
	r, when := e.resultAt(a.AfterStep)
	o.At = strings.TrimPrefix(when, " ")
	if a.SamePlacementsAs != nil {
		o.Other = e.otherName(a.SamePlacementsAs.Config)
	}
	pods := e.selectPods(r, a.Pods)
	for _, p := range pods {
		if len(o.Pods) == MaxMarked {
			o.MorePods = len(pods) - MaxMarked
			break
		}
		o.Pods = append(o.Pods, podName(p))
	}
	if len(pods) == 0 {
		o.Message = fmt.Sprintf("no pod of the result%s matches %s", when, describePods(a.Pods))
		return
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
	case a.MinOnNodes != nil:
		f = e.checkMinOnNodes(pods, a.Nodes, a.MinOnNodes)
	case a.SamePlacementsAs != nil:
		f = e.checkSame(a, pods)
	default:
		f = e.checkNodes(pods, a.Nodes)
	}
	if f == nil {
		return
	}
	if when != "" {
		f.msg = o.At + ": " + f.msg
	}
	o.Message, o.Details = f.msg, f.details.String()
	o.Failing, o.MoreFailing = f.failing, f.moreFailing
}

// resultAt is the result whose pods an assertion with afterStep checks,
// and " after step N (...)" (or " once the objects settled") for its
// messages; the result at the end and "" without afterStep.
func (e *evaluator) resultAt(afterStep *int) (*report.Result, string) {
	if afterStep == nil {
		return &e.in.Result, ""
	}
	n := *afterStep
	if n == 0 {
		return &report.Result{Pods: e.in.Result.Applied}, " once the objects settled"
	}
	if n > len(e.in.Result.Steps) {
		// The run stopped before the step: no pod to check.
		return &report.Result{}, fmt.Sprintf(" after step %d", n)
	}
	st := e.in.Result.Steps[n-1]
	return &report.Result{Pods: st.Pods}, fmt.Sprintf(" after step %d (%s)", n, st.Step)
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
		return workload.DefaultNamespace
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
