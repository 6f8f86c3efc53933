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

package scenario

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Assertion is one entry of a scenario's expect: what must hold once the
// scenario has run (its objects settled and its steps done), which
// `playground test` checks. It has one check: nodes alone (every selected
// pod is bound to a selected node), unschedulable, maxPodsPerNode,
// maxNodes, maxSpread, minOnNodes or samePlacementsAs. Pods and Nodes narrow what the check looks
// at; left out, it looks at every pod of the result (not boundPods) and
// every node of the scenario.
type Assertion struct {
	// Name is printed with the result; without it a description is made
	// from the fields.
	Name string `json:"name,omitempty"`
	// Pods selects the pods the check is about; the selection must match
	// at least one pod when the check runs.
	Pods *PodSelector `json:"pods,omitempty"`
	// Nodes, alone, is the check that every selected pod is bound to one of
	// these nodes; with maxPodsPerNode, maxNodes, maxSpread or
	// samePlacementsAs it is the nodes counted.
	Nodes *NodeSelector `json:"nodes,omitempty"`
	// Unschedulable: every selected pod ends unbound, rejected by the
	// scheduler, and, when given, rejected by that plugin and with that
	// rule or message.
	Unschedulable *UnschedulableCheck `json:"unschedulable,omitempty"`
	// MaxPodsPerNode: no selected node holds more of the selected pods.
	MaxPodsPerNode *int `json:"maxPodsPerNode,omitempty"`
	// MaxNodes: the selected pods are bound to at most this many of the
	// selected nodes (consolidation: "the batch packs onto one node").
	MaxNodeCount *int `json:"maxNodes,omitempty"`
	// MaxSpread: over the selected nodes, the most minus the fewest
	// selected pods per node is at most this.
	MaxSpread *int `json:"maxSpread,omitempty"`
	// MinOnNodes: at least this many of the selected pods are bound to
	// the selected nodes ("30% of web on on-demand nodes").
	MinOnNodes *MinOnNodes `json:"minOnNodes,omitempty"`
	// SamePlacementsAs: the scenario run again under another scheduler
	// config places the selected pods as this run does (see the README for
	// what "same" means when the scheduler breaks score ties at random).
	SamePlacementsAs *SameAs `json:"samePlacementsAs,omitempty"`
	// AfterStep checks the pods as they were once the objects had settled
	// (0) or once step N (from 1) had, rather than at the end: what must
	// hold at every size a workload is scaled to.
	AfterStep *int `json:"afterStep,omitempty"`
}

// PodSelector selects pods of the result: all of its fields must match.
type PodSelector struct {
	// Namespace, when given, is the pods' namespace.
	Namespace string `json:"namespace,omitempty"`
	// Object is the object of the scenario that owns the pods (a Pod is
	// its own owner), in Namespace or workload.DefaultNamespace.
	Object           *PodOwnerRef                      `json:"object,omitempty"`
	MatchLabels      map[string]string                 `json:"matchLabels,omitempty"`
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// PodOwnerRef names an object of the scenario by kind and name.
type PodOwnerRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// NodeSelector selects nodes of the scenario: all of its fields must match.
type NodeSelector struct {
	// Names, when given, are the only nodes selected.
	Names            []string                          `json:"names,omitempty"`
	MatchLabels      map[string]string                 `json:"matchLabels,omitempty"`
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// UnschedulableCheck narrows why the pods must be unschedulable; each field
// left out accepts any.
type UnschedulableCheck struct {
	// Plugin must have rejected at least one node in the pod's last
	// scheduling attempt (a filter plugin's name: PlacementPolicy,
	// MaintenanceWindow, NodeAffinity, ...).
	Plugin string `json:"plugin,omitempty"`
	// Rule must be named, in double quotes, in a rejection of the pod's last
	// attempt (of Plugin, if given): PlacementPolicy names its rule so,
	// `didn't match placement rule "eu-data-residency"`.
	Rule string `json:"rule,omitempty"`
	// Message must be part of a rejection's reason, or of the pod's
	// unschedulable message: MaintenanceWindow's "maintenance window",
	// DynamicResources' "cannot allocate all claims".
	Message string `json:"message,omitempty"`
}

// MinOnNodes is a minimum number of pods: the larger of Count and Percent
// of the selected pods (rounded up), never more than the pods.
type MinOnNodes struct {
	Count   *int `json:"count,omitempty"`
	Percent *int `json:"percent,omitempty"`
}

// Of is the minimum for n selected pods.
func (m *MinOnNodes) Of(n int) int {
	want := 0
	if m.Count != nil {
		want = *m.Count
	}
	if m.Percent != nil {
		want = max(want, (*m.Percent*n+99)/100)
	}
	return min(want, n)
}

// SameAs names the scheduler config to compare with.
type SameAs struct {
	// Config is a KubeSchedulerConfiguration file, relative to the
	// scenario file (or absolute).
	Config string `json:"config"`
}

// MaxAssertions caps a scenario's expect list: each assertion may print a
// pod's explanation.
const MaxAssertions = 1000

// LabelSelector returns s's label selector; s must be valid.
func (s *PodSelector) LabelSelector() labels.Selector {
	if s == nil {
		return labels.Everything()
	}
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: s.MatchLabels, MatchExpressions: s.MatchExpressions})
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// LabelSelector returns s's label selector; s must be valid.
func (s *NodeSelector) LabelSelector() labels.Selector {
	if s == nil {
		return labels.Everything()
	}
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: s.MatchLabels, MatchExpressions: s.MatchExpressions})
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// scenarioRefs is what assertions may name: objects holds the objectKey
// of every object of the scenario, namespaces the namespaces they create
// or are in, nodes every node name; nil skips that check (an object that
// did not decode, nodes too many to expand). steps is how many steps the
// scenario has.
type scenarioRefs struct {
	objects, namespaces, nodes sets.Set[string]
	steps                      int
}

// validateExpect checks the assertions against the scenario's refs.
func validateExpect(expect []Assertion, config string, refs scenarioRefs) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("expect")
	if len(expect) > MaxAssertions {
		errs = append(errs, field.TooMany(path, len(expect), MaxAssertions))
		return errs
	}
	if config != "" && len(expect) == 0 {
		errs = append(errs, field.Forbidden(field.NewPath("config"), "config is the scheduler config of `playground test`: a scenario that has it needs expect"))
	}
	for i := range expect {
		errs = append(errs, validateAssertion(&expect[i], path.Index(i), refs)...)
	}
	return errs
}

func validateAssertion(a *Assertion, p *field.Path, refs scenarioRefs) field.ErrorList {
	var errs field.ErrorList
	if a.Pods != nil {
		errs = append(errs, validatePodSelector(a.Pods, p.Child("pods"), refs)...)
	}
	if a.Nodes != nil {
		errs = append(errs, validateNodeSelector(a.Nodes, p.Child("nodes"), refs.nodes)...)
	}
	var checks []string
	if a.Unschedulable != nil {
		checks = append(checks, "unschedulable")
		if a.Nodes != nil {
			errs = append(errs, field.Forbidden(p.Child("nodes"), "an unschedulable pod is on no node: select pods only"))
		}
	}
	for _, c := range []struct {
		name  string
		value *int
	}{{"maxPodsPerNode", a.MaxPodsPerNode}, {"maxNodes", a.MaxNodeCount}, {"maxSpread", a.MaxSpread}} {
		if c.value == nil {
			continue
		}
		checks = append(checks, c.name)
		if *c.value < 0 {
			errs = append(errs, field.Invalid(p.Child(c.name), *c.value, "must not be negative"))
		}
	}
	if m := a.MinOnNodes; m != nil {
		checks = append(checks, "minOnNodes")
		errs = append(errs, validateMinOnNodes(m, p, a.Nodes == nil)...)
	}
	if a.SamePlacementsAs != nil {
		checks = append(checks, "samePlacementsAs")
		if a.SamePlacementsAs.Config == "" {
			errs = append(errs, field.Required(p.Child("samePlacementsAs", "config"), "the KubeSchedulerConfiguration file to run the scenario again with"))
		}
		if a.AfterStep != nil {
			errs = append(errs, field.Forbidden(p.Child("afterStep"), "samePlacementsAs compares the placements at the end"))
		}
	}
	if n := a.AfterStep; n != nil && (*n < 0 || *n > refs.steps) {
		errs = append(errs, field.Invalid(p.Child("afterStep"), *n, fmt.Sprintf("must be between 0 (once the objects settled) and the number of steps, %d", refs.steps)))
	}
	switch {
	case len(checks) > 1:
		errs = append(errs, field.Invalid(p, strings.Join(checks, ", "), "an assertion has one check: make one assertion per check"))
	case len(checks) == 0 && a.Nodes == nil:
		errs = append(errs, field.Required(p, "an assertion needs a check: nodes (alone), unschedulable, maxPodsPerNode, maxNodes, maxSpread, minOnNodes or samePlacementsAs"))
	}
	return errs
}

// validateMinOnNodes checks the minOnNodes of the assertion at p.
func validateMinOnNodes(m *MinOnNodes, p *field.Path, noNodes bool) field.ErrorList {
	var errs field.ErrorList
	if noNodes {
		errs = append(errs, field.Required(p.Child("nodes"), "minOnNodes counts the selected pods on these nodes"))
	}
	p = p.Child("minOnNodes")
	if m.Count == nil && m.Percent == nil {
		errs = append(errs, field.Required(p, "count, percent or both (the larger wins)"))
	}
	if m.Count != nil && *m.Count < 0 {
		errs = append(errs, field.Invalid(p.Child("count"), *m.Count, "must not be negative"))
	}
	if m.Percent != nil && (*m.Percent < 0 || *m.Percent > 100) {
		errs = append(errs, field.Invalid(p.Child("percent"), *m.Percent, "must be in the range 0-100"))
	}
	return errs
}
