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

// Package admission renders PlacementPolicy rules as MutatingAdmissionPolicy
// objects, so that what the plugin enforces is also written into every pod it
// applies to, at creation, as node affinity: autoscalers (Cluster Autoscaler,
// Karpenter) simulate scheduling from the pod's spec and never run our
// plugins, so without it they add nodes the rule forbids. The plugin's args
// stay the one source of truth; the plugin stays the enforcement and the
// explanation.
//
// A Require rule becomes required node affinity ANDed into every term the pod
// already has (a pod's own affinity is kept and narrowed, never replaced); a
// Prefer rule becomes a preferred term with the rule's weight. Each rule is
// one policy and one binding, selecting the pods the plugin selects: the
// rule's namespaces, namespace labels and pod labels, the schedulerNames of
// the profiles that run the plugin at that extension point, with excluded
// namespaces and (when the args say so) DaemonSet pods exempt.
package admission

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

const (
	// RuleLabel on a rendered object is the name of the rule it comes from.
	RuleLabel = "placementpolicy.adminsched.io/rule"
	// ProfilesAnnotation on a rendered object lists the scheduler profiles
	// (schedulerNames) whose PlacementPolicy args hold the rule.
	ProfilesAnnotation = "placementpolicy.adminsched.io/profiles"
	// AdmittedRulesAnnotation on a pod lists, comma-separated, the rules
	// whose policies wrote into its affinity when it was created: what an
	// operator reads to tell the affinity a rule added from the pod's own.
	AdmittedRulesAnnotation = "placementpolicy.adminsched.io/admitted-rules"
	// NamePrefix starts the name of every rendered object.
	NamePrefix = "placementpolicy-"

	nameLabel = admissionpolicy.NamespaceNameLabel
)

// renderer names the rendered objects.
var renderer = admissionpolicy.Renderer{
	NamePrefix: NamePrefix,
	ManagedBy:  "placement-admission",
	CanaryKey:  "placementpolicy.adminsched.io/canary",
}

// FailurePolicyType is what Options.FailurePolicy takes.
type FailurePolicyType = admissionpolicy.FailurePolicyType

// The failure policies.
const (
	Ignore = admissionpolicy.Ignore
	Fail   = admissionpolicy.Fail
)

// Options change how rules are rendered.
type Options struct {
	// FailurePolicy is what the API server does with a pod when a policy's
	// expression fails. Ignore (the default) creates the pod unmutated: the
	// scheduler still enforces the rule, only autoscalers no longer see it.
	// Fail refuses the pod.
	FailurePolicy FailurePolicyType
}

// Policy is one rule rendered: the policy and the binding that enables it.
type Policy struct {
	Rule    string
	Policy  *admissionpolicy.MutatingAdmissionPolicy
	Binding *admissionpolicy.MutatingAdmissionPolicyBinding
}

// Skipped is a rule that is not rendered, and why.
type Skipped struct {
	Rule   string
	Reason string
}

// Result is what Render produces.
type Result struct {
	Policies []Policy
	Skipped  []Skipped
}

// Render renders the rules of profiles. A rule that several profiles hold
// with the same meaning is rendered once, for all of their schedulerNames;
// rules of the same name that differ between profiles get a numbered suffix.
func Render(profiles []ProfileArgs, opts Options) (*Result, error) {
	fp, err := admissionpolicy.CheckFailurePolicy(opts.FailurePolicy)
	if err != nil {
		return nil, err
	}
	opts.FailurePolicy = fp
	groups, err := group(profiles)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	seen := map[string]int{}
	for _, g := range groups {
		seen[g.rule.Name]++
	}
	counter := map[string]int{}
	for _, g := range groups {
		reqs := requirements(g.rule.NodeSelector)
		if len(reqs) == 0 {
			res.Skipped = append(res.Skipped, Skipped{Rule: g.rule.Name, Reason: "its nodeSelector selects every node: " +
				"a Require rule then keeps no node out and a Prefer rule raises every node alike, which changes no placement"})
			continue
		}
		// The name without NamePrefix, which the renderer adds.
		name := g.rule.Name
		if seen[g.rule.Name] > 1 {
			counter[g.rule.Name]++
			name = fmt.Sprintf("%s-%d", name, counter[g.rule.Name])
		}
		res.Policies = append(res.Policies, g.render(name, reqs, opts))
	}
	return res, nil
}

// ruleGroup is one rule as the profiles in schedulerNames hold it, with the
// args-wide exemptions that shape its selection.
type ruleGroup struct {
	rule            config.PlacementRule
	excluded        []string
	ignoreDaemonSet bool
	schedulerNames  []string
}

func (g *ruleGroup) sameMeaning(o *ruleGroup) bool {
	return reflect.DeepEqual(g.rule, o.rule) && slices.Equal(g.excluded, o.excluded) && g.ignoreDaemonSet == o.ignoreDaemonSet
}

// group collects the rules of every profile at the extension point that runs
// them, merging the profiles that hold a rule with the same meaning.
func group(profiles []ProfileArgs) ([]*ruleGroup, error) {
	var groups []*ruleGroup
	for _, p := range profiles {
		if p.Args == nil {
			continue
		}
		excluded := admissionpolicy.SortedUnique(p.Args.ExcludedNamespaces)
		for _, r := range p.Args.Rules {
			switch r.Action {
			case config.PlacementRequire:
				if !p.Filter {
					continue
				}
			case config.PlacementPrefer:
				if !p.Score {
					continue
				}
			default:
				return nil, fmt.Errorf("profile %q: rule %q: action %q: must be %s or %s", p.SchedulerName, r.Name, r.Action, config.PlacementRequire, config.PlacementPrefer)
			}
			g := &ruleGroup{rule: r, excluded: excluded, ignoreDaemonSet: p.Args.IgnoreDaemonSetPods, schedulerNames: []string{p.SchedulerName}}
			i := slices.IndexFunc(groups, g.sameMeaning)
			if i < 0 {
				groups = append(groups, g)
				continue
			}
			if !slices.Contains(groups[i].schedulerNames, p.SchedulerName) {
				groups[i].schedulerNames = append(groups[i].schedulerNames, p.SchedulerName)
			}
		}
	}
	return groups, nil
}

// requirements turns a label selector into the node selector requirements
// that match the same nodes: matchLabels (in key order) as In with one value,
// then matchExpressions as they are (the four label selector operators are
// node selector operators with the same meaning, NotIn and DoesNotExist
// included for nodes without the key).
func requirements(s *metav1.LabelSelector) []v1.NodeSelectorRequirement {
	if s == nil {
		return nil
	}
	var reqs []v1.NodeSelectorRequirement
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		reqs = append(reqs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{s.MatchLabels[k]}})
	}
	for _, e := range s.MatchExpressions {
		reqs = append(reqs, v1.NodeSelectorRequirement{Key: e.Key, Operator: v1.NodeSelectorOperator(e.Operator), Values: slices.Clone(e.Values)})
	}
	return reqs
}

func (g *ruleGroup) render(name string, reqs []v1.NodeSelectorRequirement, opts Options) Policy {
	meta := renderer.ObjectMeta(name, map[string]string{RuleLabel: g.rule.Name},
		map[string]string{ProfilesAnnotation: strings.Join(g.schedulerNames, ",")})
	pair := admissionpolicy.PodPolicy{
		Meta:              meta,
		NamespaceSelector: g.namespaceSelector(),
		ObjectSelector:    g.rule.PodSelector,
		MatchConditions:   g.matchConditions(),
		Variables:         g.variables(reqs),
		Patches:           []string{g.patch(), g.annotate()},
		FailurePolicy:     opts.FailurePolicy,
	}.Render()
	return Policy{Rule: g.rule.Name, Policy: pair.Policy, Binding: pair.Binding}
}

// namespaceSelector selects the namespaces the rule applies to: its
// namespaceSelector, its namespaces by name, and none of the excluded ones.
// Nil when the rule selects pods by their labels only.
func (g *ruleGroup) namespaceSelector() *metav1.LabelSelector {
	return admissionpolicy.NamespaceSelector(g.rule.NamespaceSelector, g.rule.Namespaces, g.excluded)
}
