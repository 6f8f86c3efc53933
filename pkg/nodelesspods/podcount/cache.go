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

// Package podcount memoizes, per node, how many of the pods in the scheduler's
// NodeInfo a plugin counts, so that a score reads a node's count in O(1)
// amortized instead of scanning the node's pods in every cycle.
//
// Invariant: Count(nodeInfo, ...) equals the number of pods in
// nodeInfo.GetPods() that are not Succeeded or Failed and that the cache's
// counts function accepts. The NodeInfo is the only source; nothing outside a
// scheduling cycle (Reserve, informers) feeds the cache, so it cannot drift
// from the scheduler's view.
//
// A memo belongs to one NodeInfo object and one generation g of it. It
// holds base and baseCount, the NodeInfo's number of pods and how many are
// counted, as seen outside a pod-group cycle, where every pod is the
// generation's own; and, for generations seen only in pod-group cycles, the
// PodInfos last seen and the running count over them (a tail memo).
//
// Count relies on these facts of the scheduler, checked in the sources of
// each supported minor (a line per minor where they differ), and on nothing
// else (not on Reserve or Unreserve, which a profile may not enable):
//
//  1. Every change the scheduler's cache makes to a NodeInfo, and every
//     change in a preemption dry run, draws a new generation from one global
//     counter (NodeInfo.update). The dry run works on clones of every
//     NodeInfo (NodeInfo.Snapshot, which keeps the generation):
//     - v1.37: a snapshot mutation session, StartMutations to EndMutations,
//     changed by Snapshot.AddPod/RemovePod.
//     - v1.36: Snapshot.BackupSnapshot and its restore function; pod-group
//     preemption changes the clones by NodeInfo.RemovePod/AddPodInfo.
//     - v1.35: no snapshot-wide dry run; preemption changes clones of single
//     NodeInfos (NodeInfo.Snapshot) by NodeInfo.RemovePod/AddPodInfo.
//  2. The only changes that keep a generation are Snapshot.AssumePod and
//     Snapshot.ForgetPod in pod-group cycles: AssumePod appends a pod, and
//     ForgetPod removes an assumed one, moving the last pod into its place
//     (NodeInfo.RemovePod). Neither touches a pod in front of the assumed
//     ones: the first base pods stay in place for the whole generation, and
//     the count is baseCount plus a scan of the pods after them.
//  3. The snapshot holds assumed pods only during pod-group cycles: the
//     scheduler forgets them before each UpdateSnapshot, and outside
//     pod-group cycles it assumes pods in its cache, not in the snapshot
//     (Scheduler.assume). The caller tells Count which kind of cycle it runs
//     in (CycleState.IsPodGroupSchedulingCycle).
//     - v1.35: there are no pod-group cycles, so facts 2 and 3 hold
//     vacuously: no generation is kept across a change, and the snapshot
//     never holds assumed pods.
//  4. A PodInfo in a NodeInfo is never changed in place: the cache replaces
//     a pod's PodInfo when the pod changes, and pod objects from informers
//     are immutable. A tail memo keeps its PodInfos referenced, so none can
//     be freed and its address reused for another pod while it compares
//     against them.
//
// Memos are looked up by NodeInfo object, which the snapshot keeps for a
// node's lifetime; a preemption dry run's clones get memos of their own,
// pruned once they are gone. A hit takes no lock and writes no memory, so
// the scheduler's parallel Score calls do not contend; it reads the
// published index and the node's slot. Memory is one slot per node the
// snapshot holds, plus a tail memo (a reference and an int32 per pod) for
// nodes whose generation was scored only in pod-group cycles.
//
// Lookups the memo does not answer alone (Recounts: a tail or a scan) are
// counted in the node's slot, on the path that writes the slot anyway, and
// summed by Recounts under mu; hits are not counted here, so that a hit
// still writes nothing (the caller counts its lookups). A slot pruned from
// the index is folded into the retired totals under mu, in the same pass
// that drops it, so the sums never go down; a recount on another goroutine
// that read the index before the prune is not counted, which can only
// undercount (a slot pruned by the publish that its own lookup made is
// retired by that lookup: see slot).
package podcount

import (
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// tailMemo is the count of pods, a generation's PodInfos as last seen in a
// pod-group cycle. It is never changed once stored.
type tailMemo struct {
	generation int64
	pods       []fwk.PodInfo
	// counts[i] is the number of counted pods in pods[:i+1].
	counts []int32
}

// countOf returns the number of counted pods in m.pods[:n].
func (m *tailMemo) countOf(n int) int {
	if n == 0 {
		return 0
	}
	return int(m.counts[n-1])
}

// Cache is safe for concurrent use: Count on different nodes runs in
// parallel and a hit takes no lock. The zero value is not usable: call New.
type Cache struct {
	counts func(*v1.Pod) bool
	// nodes tells which NodeInfos the snapshot still holds, to drop the
	// memos of the others; nil keeps every memo.
	nodes fwk.NodeInfoLister

	// published is read without a lock and never changed once stored.
	published atomic.Pointer[index]
	// mu guards pending, the slots of NodeInfos first seen since the last
	// publish, and publishing.
	mu      sync.Mutex
	pending index
	// retired sums the recounts of the slots pruned from the index.
	retired Recounts
}

// New returns an empty cache that counts the pods for which counts returns
// true. nodes, usually the scheduler's snapshot, lets the cache forget the
// NodeInfos that are gone; it is read only from Count, during scheduling
// cycles.
func New(counts func(*v1.Pod) bool, nodes fwk.NodeInfoLister) *Cache {
	c := &Cache{counts: counts, nodes: nodes, pending: index{}}
	c.published.Store(&index{})
	return c
}

// Count returns how many counted pods nodeInfo holds. podGroupCycle tells
// whether the caller runs in a pod-group scheduling cycle, whose snapshot may
// hold assumed pods; pass true when unsure, which is always correct, only
// slower. nodeInfo.Node() must not be nil. A hit does not allocate.
func (c *Cache) Count(nodeInfo fwk.NodeInfo, podGroupCycle bool) int {
	pods := nodeInfo.GetPods()
	generation := nodeInfo.GetGeneration()
	s, orphan := c.slot(nodeInfo)
	g, base, baseCount, ok := s.read()
	known := ok && g == generation && base <= len(pods)
	if !podGroupCycle {
		if known && base == len(pods) {
			return baseCount
		}
		n := c.scan(pods)
		s.write(generation, len(pods), n)
		c.record(s, orphan, false)
		return n
	}
	if known {
		// Only assumed pods follow the first base ones (facts 2 and 3).
		if base == len(pods) {
			return baseCount
		}
		c.record(s, orphan, true)
		return baseCount + c.scan(pods[base:])
	}
	// No count of this generation from outside a pod-group cycle: compare
	// with the PodInfos last seen, one by one (fact 4).
	m := s.tail.Load()
	same := 0
	if m != nil && m.generation == generation {
		same = commonPrefix(m.pods, pods)
		if same == len(pods) {
			return m.countOf(same)
		}
	} else {
		m = nil
	}
	next := c.tailMemo(generation, pods, m, same)
	s.tail.Store(next)
	c.record(s, orphan, same > 0)
	return next.countOf(len(pods))
}

// tailMemo returns the memo of pods, whose first same PodInfos are prev's.
func (c *Cache) tailMemo(generation int64, pods []fwk.PodInfo, prev *tailMemo, same int) *tailMemo {
	m := &tailMemo{generation: generation, pods: slices.Clone(pods), counts: make([]int32, len(pods))}
	n := 0
	if same > 0 {
		copy(m.counts, prev.counts[:same])
		n = prev.countOf(same)
	}
	for i := same; i < len(pods); i++ {
		if c.counted(pods[i].GetPod()) {
			n++
		}
		m.counts[i] = int32(n)
	}
	return m
}

// commonPrefix returns how many leading PodInfos a and b share.
func commonPrefix(a, b []fwk.PodInfo) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Len returns how many NodeInfos have a memo.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(*c.published.Load()) + len(c.pending)
}

func (c *Cache) counted(pod *v1.Pod) bool {
	return pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed && c.counts(pod)
}

func (c *Cache) scan(pods []fwk.PodInfo) int {
	n := 0
	for _, pi := range pods {
		if c.counted(pi.GetPod()) {
			n++
		}
	}
	return n
}
