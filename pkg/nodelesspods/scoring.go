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
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/normalize"
)

// loadPerFullNode is the load of a node whose counted pods equal its
// allocatable pods, in RelativeToCapacity mode (parts per million).
const loadPerFullNode = 1_000_000

// load is the raw score: the count itself, or, relative to capacity, the share
// of the node's allocatable pods that counted pods take. A node that allows no
// pods at all is reported full, so it never looks empty. The allocatable
// pods are read only in relative mode: Score of every node in every cycle
// should not touch memory it does not need.
func (pl *NodeLessPods) load(count int, nodeInfo fwk.NodeInfo) int64 {
	if !pl.relative {
		return int64(count)
	}
	allocatablePods := nodeInfo.GetAllocatable().GetAllowedPodNumber()
	if allocatablePods <= 0 {
		return loadPerFullNode
	}
	return int64(count) * loadPerFullNode / int64(allocatablePods)
}

// NormalizeScore maps the candidates' loads linearly onto [MinScore, MaxScore]:
// the lightest node gets MaxScore in LeastPods mode, the heaviest in MostPods
// mode. When every load is equal, every node gets MaxScore. It also counts
// the cycle's lookups for nodelesspods_count_lookups_total.
func (pl *NodeLessPods) NormalizeScore(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	// The framework normalizes once per cycle, after Score ran on every
	// node of scores: the cycle's count lookups.
	pl.lookups.Add(uint64(len(scores)))
	logger := klog.FromContext(ctx).V(4)
	var loads []int64
	if logger.Enabled() {
		loads = make([]int64, len(scores))
		for i := range scores {
			loads[i] = scores[i].Score
		}
	}
	normalize.MinMax(scores, pl.mode != config.NodeLessPodsMostPods)
	for i := range loads {
		logger.Info("Scored node", "plugin", Name, "pod", klog.KObj(pod), "node", scores[i].Name,
			"load", loads[i], "score", scores[i].Score)
	}
	return nil
}
