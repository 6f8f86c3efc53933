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

package nodelesspods

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreScore looks every candidate's count up once, in one loop, before the
// framework scores the nodes. It never returns Skip.
//
// Score runs on each node after the other score plugins have worked on it,
// and by then the memo's index and slots are out of the CPU's caches: in
// scheduler_perf a lookup there cost several times the rest of the call.
// Looked up here, recounted here if a node changed, they are in cache when
// the parallel Score calls read them, which then find hits. A count does
// not change between a cycle's PreScore and its Score calls, and Score
// checks the memo against the NodeInfo anyway, so a profile that enables
// the plugin at score without preScore gets the same scores, only slower.
// Nothing is kept for the cycle and nothing is allocated.
func (pl *NodeLessPods) PreScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	podGroup := inPodGroupCycle(state)
	for _, nodeInfo := range nodes {
		if nodeInfo.Node() != nil {
			pl.counts.Count(nodeInfo, podGroup)
		}
	}
	return nil
}
