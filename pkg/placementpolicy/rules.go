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

package placementpolicy

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-base/metrics"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// rule is a placement rule compiled from the args.
type rule struct {
	name string
	// namespaces, namespaceSelector and podSelector are nil when the rule does
	// not select pods by them.
	namespaces        sets.Set[string]
	namespaceSelector labels.Selector
	podSelector       labels.Selector
	nodes             labels.Selector
	require           bool
	weight            int64
	// reason is the rejection a Require rule gives a node it does not match,
	// built once so that Filter does not format it per node.
	reason string
	// applied and unschedulable are the rule's children of
	// placementpolicy_rule_applied_total and _unschedulable_total for the
	// plugin's profile (unschedulable only for a Require rule), taken in New.
	applied       metrics.CounterMetric
	unschedulable metrics.CounterMetric
}

// ErrReasonFormat is the rejection of a node that a Require rule does not
// match, with the rule's name.
const ErrReasonFormat = "node(s) didn't match placement rule %q"

func compileRule(r *config.PlacementRule) (*rule, error) {
	c := &rule{
		name:    r.Name,
		require: r.Action == config.PlacementRequire,
		weight:  int64(r.Weight),
		reason:  fmt.Sprintf(ErrReasonFormat, r.Name),
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
func (r *rule) selects(pod *v1.Pod, nsLabels labels.Labels) bool {
	return r.selectsByPod(pod) && (r.namespaceSelector == nil || r.namespaceSelector.Matches(nsLabels))
}

// selectsByPod reports whether the pod's own fields (its namespace's name and
// its labels) pass the rule's namespaces and podSelector: whether the rule
// can apply to pod whatever the labels of its namespace.
func (r *rule) selectsByPod(pod *v1.Pod) bool {
	if r.namespaces != nil && !r.namespaces.Has(pod.Namespace) {
		return false
	}
	return r.podSelector == nil || r.podSelector.Matches(labels.Set(pod.Labels))
}

// podRules are the rules that apply to one pod, in the order of the args,
// and which of the Require rules rejected a node in this cycle.
type podRules struct {
	required  []*rule
	preferred []*rule
	// rejected has bit i set once Filter saw required[i] reject a node;
	// rejectedMore holds the rules past the 64th, and is allocated only for
	// a pod that more than 64 Require rules select. Filter runs on parallel
	// goroutines, hence atomics; a set bit is only read again, so each rule
	// costs one atomic write per cycle, not one per rejected node.
	rejected     atomic.Uint64
	rejectedMore []atomic.Bool
}

// Clone returns the same state: the rules depend on the pod only, never on
// what the cycle adds to or removes from nodes. Preemption's dry runs on the
// clone then record their rejections here too: a Require rule rejects a node
// by its labels, which no victim changes, so it rejects only nodes it would
// have rejected in the cycle itself.
func (s *podRules) Clone() fwk.StateData { return s }

// recordRejection notes that required[i] rejected a node.
func (s *podRules) recordRejection(i int) {
	if i >= 64 {
		if b := &s.rejectedMore[i-64]; !b.Load() {
			b.Store(true)
		}
		return
	}
	if bit := uint64(1) << i; s.rejected.Load()&bit == 0 {
		s.rejected.Or(bit)
	}
}

// rejectedBy reports whether required[i] rejected a node in this cycle.
func (s *podRules) rejectedBy(i int) bool {
	if i >= 64 {
		return s.rejectedMore[i-64].Load()
	}
	return s.rejected.Load()&(uint64(1)<<i) != 0
}

// countApplied counts an attempt in which the rules apply to the pod.
func (s *podRules) countApplied() {
	for _, r := range s.required {
		r.applied.Inc()
	}
	for _, r := range s.preferred {
		r.applied.Inc()
	}
}

// countUnschedulable counts an attempt that found no feasible node for every
// Require rule that rejected a node in it.
func (s *podRules) countUnschedulable() {
	for i, r := range s.required {
		if s.rejectedBy(i) {
			r.unschedulable.Inc()
		}
	}
}

func (s *podRules) empty() bool { return s == nil || len(s.required)+len(s.preferred) == 0 }

// names returns the names of the rules, sorted: the pod's signature
// fragment, and how logs and tests name a rule set.
func (s *podRules) names() []string {
	if s.empty() {
		return nil
	}
	names := make([]string, 0, len(s.required)+len(s.preferred))
	for _, r := range s.required {
		names = append(names, r.name)
	}
	for _, r := range s.preferred {
		names = append(names, r.name)
	}
	slices.Sort(names)
	return names
}

// admits reports whether node matches every required rule, and the index in
// required of the first rule it does not match otherwise.
func (s *podRules) admits(node *v1.Node) (bool, int) {
	set := labels.Set(node.Labels)
	for i, r := range s.required {
		if !r.nodes.Matches(set) {
			return false, i
		}
	}
	return true, -1
}

// preference is the raw score of node: the summed weights of the preferred
// rules it matches.
func (s *podRules) preference(node *v1.Node) int64 {
	set := labels.Set(node.Labels)
	var sum int64
	for _, r := range s.preferred {
		if r.nodes.Matches(set) {
			sum += r.weight
		}
	}
	return sum
}

func (s *podRules) String() string {
	return "[" + strings.Join(s.names(), " ") + "]"
}
