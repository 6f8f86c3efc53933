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

// Package match decides which PlacementPolicy rules apply to a pod, whether
// they admit a node and how much they prefer it. It imports no scheduler
// framework and keeps no metrics, so that the scheduler plugin and the
// descheduler's evictor run the same code (KEP-47, section 6b).
package match

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/podowner"
)

// Rule is a placement rule compiled from the args.
type Rule struct {
	name  string
	index int
	// namespaces, namespaceSelector and podSelector are nil when the rule does
	// not select pods by them.
	namespaces        sets.Set[string]
	namespaceSelector labels.Selector
	podSelector       labels.Selector
	nodes             labels.Selector
	require           bool
	weight            int64
}

// Name is the rule's name in the args.
func (r *Rule) Name() string { return r.name }

// Index is the rule's position in the args, and in Rules: callers keep their
// own per-rule data (metrics, messages) in a slice indexed alike.
func (r *Rule) Index() int { return r.index }

// Require reports whether the rule is a Require rule, not a Prefer rule.
func (r *Rule) Require() bool { return r.require }

// HasNamespaceSelector reports whether the rule reads the labels of the
// pod's namespace.
func (r *Rule) HasNamespaceSelector() bool { return r.namespaceSelector != nil }

func compileRule(r *config.PlacementRule, index int) (*Rule, error) {
	c := &Rule{
		name:    r.Name,
		index:   index,
		require: r.Action == config.PlacementRequire,
		weight:  int64(r.Weight),
	}
	if len(r.Namespaces) > 0 {
		c.namespaces = sets.New(r.Namespaces...)
	}
	var err error
	if r.NamespaceSelector != nil {
		if c.namespaceSelector, err = metav1.LabelSelectorAsSelector(r.NamespaceSelector); err != nil {
			return nil, fmt.Errorf("rule %q: namespaceSelector: %w", r.Name, err)
		}
	}
	if r.PodSelector != nil {
		if c.podSelector, err = metav1.LabelSelectorAsSelector(r.PodSelector); err != nil {
			return nil, fmt.Errorf("rule %q: podSelector: %w", r.Name, err)
		}
	}
	if c.nodes, err = metav1.LabelSelectorAsSelector(r.NodeSelector); err != nil {
		return nil, fmt.Errorf("rule %q: nodeSelector: %w", r.Name, err)
	}
	return c, nil
}

// selects reports whether the rule applies to pod, whose namespace carries
// nsLabels (read only when the rule has a namespaceSelector).
func (r *Rule) selects(pod *v1.Pod, nsLabels labels.Set) bool {
	return r.SelectsByPod(pod) && (r.namespaceSelector == nil || r.namespaceSelector.Matches(nsLabels))
}

// SelectsByPod reports whether the pod's own fields (its namespace's name and
// its labels) pass the rule's namespaces and podSelector: whether the rule
// can apply to pod whatever the labels of its namespace.
func (r *Rule) SelectsByPod(pod *v1.Pod) bool {
	if r.namespaces != nil && !r.namespaces.Has(pod.Namespace) {
		return false
	}
	return r.podSelector == nil || r.podSelector.Matches(labels.Set(pod.Labels))
}

// Rules are the compiled rules of one PlacementPolicyArgs, in its order,
// with its exemptions and the gate that most pods stop at.
type Rules struct {
	rules []*Rule
	gate  gate
	// excluded namespaces and DaemonSet pods are exempt from every rule.
	excluded        sets.Set[string]
	ignoreDaemonSet bool
	namespaceLabels bool
}

// Compile compiles args, which validation has accepted.
func Compile(args *config.PlacementPolicyArgs) (*Rules, error) {
	rs := &Rules{
		excluded:        sets.New(args.ExcludedNamespaces...),
		ignoreDaemonSet: args.IgnoreDaemonSetPods,
	}
	for i := range args.Rules {
		r, err := compileRule(&args.Rules[i], i)
		if err != nil {
			return nil, err
		}
		rs.rules = append(rs.rules, r)
		rs.namespaceLabels = rs.namespaceLabels || r.namespaceSelector != nil
	}
	rs.gate = newGate(rs.rules)
	return rs, nil
}

// Len is the number of rules.
func (rs *Rules) Len() int { return len(rs.rules) }

// At returns the rule of index i, 0 <= i < Len().
func (rs *Rules) At(i int) *Rule { return rs.rules[i] }

// NeedsNamespaceLabels reports whether a rule reads the labels of a pod's
// namespace: only then must For be given them.
func (rs *Rules) NeedsNamespaceLabels() bool { return rs.namespaceLabels }

// Open reports whether the gate lets every pod through: some rule may apply
// to any pod (it lists no namespaces and has no podSelector that needs a
// label key), so every pod pays the rules and, with NeedsNamespaceLabels, a
// namespace lookup.
func (rs *Rules) Open() bool { return rs.gate.open }

// MayApply reports whether a rule may apply to pod, from its namespace's name
// and its label keys alone, without allocating; false means that none does.
// It is For's first step, for callers that must skip work (a namespace
// lookup) for the pods it stops.
func (rs *Rules) MayApply(pod *v1.Pod) bool { return rs.gate.mayApply(pod) }

// Exempt reports whether pod is exempt from every rule: its namespace is
// excluded, or it is a DaemonSet pod and the args ignore those.
func (rs *Rules) Exempt(pod *v1.Pod) bool {
	if rs.excluded.Has(pod.Namespace) {
		return true
	}
	return rs.ignoreDaemonSet && podowner.IsDaemonSetPod(pod)
}

// For returns the rules that apply to pod, whose namespace carries nsLabels
// (read only when NeedsNamespaceLabels). It does not allocate unless a rule
// applies.
func (rs *Rules) For(pod *v1.Pod, nsLabels labels.Set) PodRules {
	var p PodRules
	if !rs.gate.mayApply(pod) || rs.Exempt(pod) {
		return p
	}
	for _, r := range rs.rules {
		if !r.selects(pod, nsLabels) {
			continue
		}
		if r.require {
			p.Required = append(p.Required, r)
		} else {
			p.Preferred = append(p.Preferred, r)
		}
	}
	return p
}
