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

package ondemandshare

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// PreScore returns Skip unless the pod is undecided and its workload holds
// its minimum: only then does spot deserve a preference. A held pod's
// feasible nodes are all on-demand already.
func (pl *OnDemandShare) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	t, err := pl.cycleTally(state, pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if t == nil || t.hold() {
		return &pl.skip
	}
	if state != nil {
		state.Write(stateKey, t)
	}
	return nil
}

// Score prefers spot nodes, without requiring them: MaxNodeScore for a spot
// node, MinNodeScore for any other. The scores are in range already, so the
// plugin has no ScoreExtensions.
func (pl *OnDemandShare) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	t, err := pl.cycleTally(state, pod)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if t == nil || t.hold() {
		return fwk.MinNodeScore, nil
	}
	if c, _ := t.policy.NodeClass(node); c == share.Spot {
		return fwk.MaxNodeScore, nil
	}
	return fwk.MinNodeScore, nil
}

// ScoreExtensions returns nil: see Score.
func (pl *OnDemandShare) ScoreExtensions() fwk.ScoreExtensions { return nil }
