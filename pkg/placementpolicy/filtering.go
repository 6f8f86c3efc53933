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
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/podgroupcycle"
)

// stateKey is where PreFilter leaves the pod's rules for Filter and PreScore.
const stateKey fwk.StateKey = Name

// PreFilter finds the rules that apply to the pod and leaves them in the
// cycle state for Filter and PreScore. Without a Require rule Filter has
// nothing to do: PreFilter returns Skip.
func (pl *PlacementPolicy) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	// Most pods: no rule can select them (see gate).
	if !pl.rules.MayApply(pod) {
		return nil, &pl.skip
	}
	s, err := pl.rulesFor(pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if s.empty() {
		return nil, &pl.skip
	}
	state.Write(stateKey, s)
	if !podgroupcycle.Is(state) {
		s.countApplied(pl.data)
	}
	if len(s.Required) == 0 {
		return nil, &pl.skip
	}
	if logger := klog.FromContext(ctx).V(5); logger.Enabled() {
		logger.Info("Placement rules apply", "pod", klog.KObj(pod), "rules", s)
	}
	return nil, nil
}

// PreFilterExtensions returns nil: the pod's rules do not depend on the other
// pods of the cycle.
func (pl *PlacementPolicy) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter admits a node only when it matches every Require rule of the pod,
// and names the first rule it does not match. Preemption cannot change node
// labels, so the rejection is unresolvable.
func (pl *PlacementPolicy) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	s, err := pl.cycleRules(state, pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s.empty() {
		return nil
	}
	if i := s.Rejecting(node); i >= 0 {
		s.recordRejection(i)
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pl.data[s.Required[i].Index()].reason)
	}
	return nil
}

// PostFilter only counts: the attempt found no feasible node, so every
// Require rule that Filter saw reject a node counts one unschedulable
// attempt. It returns Unschedulable, which lets the PostFilter plugins after
// it (DefaultPreemption) run: preemption cannot make a node match a rule,
// but it can free a node that another plugin rejected. The framework does not
// run PostFilter in pod-group cycles (see the README).
func (pl *PlacementPolicy) PostFilter(_ context.Context, state fwk.CycleState, _ *v1.Pod, _ fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if state == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	if d, err := state.Read(stateKey); err == nil {
		if s, ok := d.(*podRules); ok {
			s.countUnschedulable(pl.data)
		}
	}
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

// cycleRules returns the rules PreFilter found, or finds them when PreFilter
// did not run (a profile may disable it) or found none.
func (pl *PlacementPolicy) cycleRules(state fwk.CycleState, pod *v1.Pod) (*podRules, error) {
	s, _, err := pl.cycleRulesFrom(state, pod)
	return s, err
}

// cycleRulesFrom is cycleRules, and reports whether the rules came from the
// cycle state, that is, whether PreFilter found (and counted) them.
func (pl *PlacementPolicy) cycleRulesFrom(state fwk.CycleState, pod *v1.Pod) (*podRules, bool, error) {
	// A pod the gate stops has no rules: PreFilter wrote none to the cycle
	// state, so there is nothing to read.
	if !pl.rules.MayApply(pod) {
		return nil, false, nil
	}
	if state != nil {
		if d, err := state.Read(stateKey); err == nil {
			s, ok := d.(*podRules)
			if !ok {
				return nil, false, fmt.Errorf("%s: cycle state holds %T", Name, d)
			}
			return s, true, nil
		}
	}
	s, err := pl.rulesFor(pod)
	return s, false, err
}
