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

package nodepoolquota

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/quota"
)

// stateKey is where PreFilter leaves the pod's pairs for Filter.
const stateKey fwk.StateKey = Name

// cycleState is the pod's pairs with their teams' usage in the snapshot.
type cycleState struct {
	pairs []pair
}

// Clone copies used, which AddPod and RemovePod change in the clones that
// preemption and nominated pods filter with; req and the quotas are only
// read.
func (s *cycleState) Clone() fwk.StateData {
	c := &cycleState{pairs: make([]pair, len(s.pairs))}
	copy(c.pairs, s.pairs)
	for i := range c.pairs {
		c.pairs[i].used = append([]int64(nil), s.pairs[i].used...)
	}
	return c
}

// PreFilter finds the (quota, team) pairs the pod counts against and counts
// each team's usage in its pool from the scheduler's snapshot: the pods
// bound or assumed on the pool's nodes whose namespace is in the team. A
// pod no quota counts makes Filter unnecessary: PreFilter returns Skip.
func (pl *NodePoolQuota) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	pairs := pl.pairsFor(pod)
	if len(pairs) == 0 {
		return nil, &pl.skip
	}
	if err := pl.countUsage(pod, pairs); err != nil {
		return nil, fwk.AsStatus(err)
	}
	state.Write(stateKey, &cycleState{pairs: pairs})
	if logger := klog.FromContext(ctx).V(4); logger.Enabled() {
		for i := range pairs {
			p := &pairs[i]
			logger.Info("Pod counts against a node pool quota", "pod", klog.KObj(pod), "pool", p.q.Name, "team", p.teamQuota().Name,
				"used", p.used, "requests", p.req)
		}
	}
	return nil, nil
}

// countUsage adds up, for each pair, the requests of the team's pods on the
// pool's nodes in the snapshot. The snapshot holds every pod bound or
// assumed by this scheduler at the start of the cycle, so a pod assumed a
// moment ago counts although the API server has not bound it yet.
func (pl *NodePoolQuota) countUsage(pod *v1.Pod, pairs []pair) error {
	nodes, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return fmt.Errorf("%s: listing the snapshot's nodes: %w", Name, err)
	}
	memo := nsMemo{pl: pl, skip: !readsLabels(pairs)}
	for _, ni := range nodes {
		node := ni.Node()
		if node == nil {
			continue
		}
		for i := range pairs {
			p := &pairs[i]
			if !p.q.InPool(node.Labels) {
				continue
			}
			for _, pi := range ni.GetPods() {
				if pi.GetPod().UID != pod.UID {
					p.count(pi, memo.get, 1)
				}
			}
		}
	}
	return nil
}

// readsLabels reports whether a quota of pairs selects namespaces by label:
// only then does counting need the labels of the pods' namespaces.
func readsLabels(pairs []pair) bool {
	for i := range pairs {
		for _, t := range pairs[i].q.Teams {
			if t.Selector != nil {
				return true
			}
		}
	}
	return false
}

// PreFilterExtensions returns the plugin: the usage of a team changes with
// the pods preemption removes and the nominated pods the framework adds.
func (pl *NodePoolQuota) PreFilterExtensions() fwk.PreFilterExtensions { return pl }

// AddPod counts podInfoToAdd against every pair whose pool holds nodeInfo's
// node and whose team holds its namespace.
func (pl *NodePoolQuota) AddPod(_ context.Context, state fwk.CycleState, _ *v1.Pod, podInfoToAdd fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	return pl.adjust(state, podInfoToAdd, nodeInfo, 1)
}

// RemovePod frees what podInfoToRemove counted. Only a pod of the same team
// in the same pool frees the team's quota: preemption that evicts another
// team's pods, or pods elsewhere, gains the pod nothing here.
func (pl *NodePoolQuota) RemovePod(_ context.Context, state fwk.CycleState, _ *v1.Pod, podInfoToRemove fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	return pl.adjust(state, podInfoToRemove, nodeInfo, -1)
}

func (pl *NodePoolQuota) adjust(state fwk.CycleState, pi fwk.PodInfo, nodeInfo fwk.NodeInfo, sign int64) *fwk.Status {
	s, err := readState(state)
	if err != nil {
		return fwk.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	for i := range s.pairs {
		p := &s.pairs[i]
		if p.q.InPool(node.Labels) {
			p.count(pi, pl.namespaceLabels, sign)
		}
	}
	return nil
}

// Filter rejects a node of a pool where the pod's team would pass a limit,
// naming the limit. The rejection is Unschedulable, not unresolvable:
// preemption of the team's own pods in the pool frees quota. Nodes outside
// every pool of the pod's quotas pass.
func (pl *NodePoolQuota) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	s, err := readState(state)
	if err != nil {
		return fwk.AsStatus(err)
	}
	for i := range s.pairs {
		p := &s.pairs[i]
		if !p.q.InPool(node.Labels) {
			continue
		}
		team := p.teamQuota()
		if j := quota.Exceeded(team, p.used, p.req); j >= 0 {
			msg := quota.Message(p.q.Name, team, j, p.used, p.req)
			if p.rejected.CompareAndSwap(false, true) {
				pl.countRejection(p, j)
				klog.FromContext(ctx).V(4).Info("Node pool quota rejects the pod", "pod", klog.KObj(pod), "node", klog.KObj(node), "reason", msg)
			}
			return fwk.NewStatus(fwk.Unschedulable, msg)
		}
	}
	return nil
}

// readState returns what PreFilter left in the cycle state.
func readState(state fwk.CycleState) (*cycleState, error) {
	d, err := state.Read(stateKey)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the cycle state (did PreFilter run?): %w", Name, err)
	}
	s, ok := d.(*cycleState)
	if !ok {
		return nil, fmt.Errorf("%s: cycle state holds %T", Name, d)
	}
	return s, nil
}
