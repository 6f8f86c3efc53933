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
	"sync/atomic"

	"k8s.io/component-base/metrics"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/match"
)

// ruleData is what the plugin keeps per rule, indexed like match.Rules.
type ruleData struct {
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

// podRules are the rules that apply to one pod, and which of the Require
// rules rejected a node in this cycle.
type podRules struct {
	match.PodRules
	// rejected has bit i set once Filter saw Required[i] reject a node;
	// rejectedMore holds the rules past the 64th, and is allocated only for
	// a pod that more than 64 Require rules select. Filter runs on parallel
	// goroutines, hence atomics; a set bit is only read again, so each rule
	// costs one atomic write per cycle, not one per rejected node.
	rejected     atomic.Uint64
	rejectedMore []atomic.Bool
}

// newPodRules wraps the rules that apply to a pod, nil when none does.
func newPodRules(p match.PodRules) *podRules {
	if p.Empty() {
		return nil
	}
	s := &podRules{PodRules: p}
	if len(p.Required) > 64 {
		s.rejectedMore = make([]atomic.Bool, len(p.Required)-64)
	}
	return s
}

// Clone returns the same state: the rules depend on the pod only, never on
// what the cycle adds to or removes from nodes. Preemption's dry runs on the
// clone then record their rejections here too: a Require rule rejects a node
// by its labels, which no victim changes, so it rejects only nodes it would
// have rejected in the cycle itself.
func (s *podRules) Clone() fwk.StateData { return s }

// recordRejection notes that Required[i] rejected a node.
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

// rejectedBy reports whether Required[i] rejected a node in this cycle.
func (s *podRules) rejectedBy(i int) bool {
	if i >= 64 {
		return s.rejectedMore[i-64].Load()
	}
	return s.rejected.Load()&(uint64(1)<<i) != 0
}

// countApplied counts an attempt in which the rules apply to the pod.
func (s *podRules) countApplied(data []ruleData) {
	for _, r := range s.Required {
		data[r.Index()].applied.Inc()
	}
	for _, r := range s.Preferred {
		data[r.Index()].applied.Inc()
	}
}

// countUnschedulable counts an attempt that found no feasible node for every
// Require rule that rejected a node in it.
func (s *podRules) countUnschedulable(data []ruleData) {
	for i, r := range s.Required {
		if s.rejectedBy(i) {
			data[r.Index()].unschedulable.Inc()
		}
	}
}

func (s *podRules) empty() bool { return s == nil || s.Empty() }

// names returns the names of the rules, sorted.
func (s *podRules) names() []string {
	if s == nil {
		return nil
	}
	return s.Names()
}

func (s *podRules) String() string {
	if s == nil {
		return "[]"
	}
	return s.PodRules.String()
}

// newRuleData formats each rule's rejection once.
func newRuleData(rules *match.Rules) []ruleData {
	data := make([]ruleData, rules.Len())
	for i := range data {
		data[i].reason = fmt.Sprintf(ErrReasonFormat, rules.At(i).Name())
	}
	return data
}
