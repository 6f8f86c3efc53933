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

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/normalize"
	"github.com/adminsched/scheduler-plugins/pkg/podgroupcycle"
)

// PreScore returns Skip unless a Prefer rule applies to the pod, so that
// Score and NormalizeScore run only for the pods the plugin concerns. When
// PreFilter did not find the rules (a profile that enables the plugin at
// score only), PreScore counts the attempt for them.
func (pl *PlacementPolicy) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	// Most pods: no rule can select them (see gate).
	if !pl.rules.MayApply(pod) {
		return &pl.skip
	}
	s, fromPreFilter, err := pl.cycleRulesFrom(state, pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !fromPreFilter && !s.empty() && (state == nil || !podgroupcycle.Is(state)) {
		s.countApplied(pl.data)
	}
	if s.empty() || len(s.Preferred) == 0 {
		return &pl.skip
	}
	return nil
}

// Score returns the summed weights of the pod's Prefer rules that the node
// matches.
func (pl *PlacementPolicy) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	s, err := pl.cycleRules(state, pod)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if s.empty() {
		return 0, nil
	}
	return s.Preference(node), nil
}

// ScoreExtensions returns the plugin itself: it normalizes its scores.
func (pl *PlacementPolicy) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore maps the summed weights linearly onto [MinScore, MaxScore]:
// the nodes that satisfy the most preference score 100, those that satisfy
// the least 0, and when every node satisfies the same, every node scores 100.
func (pl *PlacementPolicy) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	normalize.MinMax(scores, false)
	return nil
}
