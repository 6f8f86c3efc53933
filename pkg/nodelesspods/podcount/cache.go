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
// Invariant: Count(nodeInfo) equals the number of pods in nodeInfo.GetPods()
// that are not Succeeded or Failed and that the cache's counts function
// accepts. The NodeInfo is the only source: the cache keeps no pods, so it
// cannot drift from the scheduler's view.
//
// To be fast, each node has one memo: the count and the key it was computed
// at, the NodeInfo's generation and its number of pods. The invariant holds as
// long as a NodeInfo changes the ways the scheduler changes it: every change
// its cache makes gives the node a new generation, and in pod-group cycles the
// snapshot adds or removes one assumed pod keeping the generation, which
// changes the number of pods. Any other change under the same key must be
// followed by Invalidate, which drops the node's memo; the plugin calls it from
// Reserve and Unreserve, the moments the snapshot changes behind the cache.
// Memory is one memo per node the snapshot holds, none per pod.
package podcount

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// minPruneSlack keeps small clusters from pruning on every new node.
const minPruneSlack = 64

// memo is a node's count and the key it was computed at. It is stored inline
// in the map, so that a hit reads one map entry and follows no pointer.
type memo struct {
	generation int64
	pods       int32
	count      int32
}

// Cache is safe for concurrent use: Count on different nodes runs in
// parallel, and hits only take a read lock. The zero value is not usable:
// call New.
type Cache struct {
	counts func(*v1.Pod) bool
	// nodes tells which NodeInfos the snapshot still holds, to drop the
	// memos of the others; nil keeps every memo.
	nodes fwk.NodeInfoLister

	mu sync.RWMutex
	// memos is keyed by the NodeInfo itself: the scheduler's snapshot keeps
	// one NodeInfo object per node for the node's lifetime and updates it in
	// place, and a pointer hashes without reading the node's name.
	memos map[fwk.NodeInfo]memo
	// byName finds a node's NodeInfo for Invalidate, which runs outside the
	// scheduling cycle and must not read the snapshot.
	byName map[string]fwk.NodeInfo
}

// New returns an empty cache that counts the pods for which counts returns
// true. nodes, usually the scheduler's snapshot, lets the cache forget the
// nodes that are gone; it is read only from Count, during scheduling cycles.
func New(counts func(*v1.Pod) bool, nodes fwk.NodeInfoLister) *Cache {
	return &Cache{
		counts: counts,
		nodes:  nodes,
		memos:  make(map[fwk.NodeInfo]memo),
		byName: make(map[string]fwk.NodeInfo),
	}
}

// Count returns how many counted pods nodeInfo holds. nodeInfo.Node() must not
// be nil. A hit takes a read lock and does not allocate.
func (c *Cache) Count(nodeInfo fwk.NodeInfo) int {
	generation, pods := nodeInfo.GetGeneration(), len(nodeInfo.GetPods())
	c.mu.RLock()
	m, ok := c.memos[nodeInfo]
	c.mu.RUnlock()
	if ok && m.generation == generation && int(m.pods) == pods {
		return int(m.count)
	}
	n := c.scan(nodeInfo)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.memos[nodeInfo]; !known {
		c.byName[nodeInfo.Node().Name] = nodeInfo
		c.maybePrune()
	}
	c.memos[nodeInfo] = memo{generation: generation, pods: int32(pods), count: int32(n)}
	return n
}

// Invalidate drops nodeName's memo: its next Count scans the NodeInfo again.
func (c *Cache) Invalidate(nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ni, ok := c.byName[nodeName]; ok {
		delete(c.memos, ni)
		delete(c.byName, nodeName)
	}
}

// Len returns how many nodes have a memo.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.memos)
}

func (c *Cache) scan(nodeInfo fwk.NodeInfo) int {
	n := 0
	for _, pi := range nodeInfo.GetPods() {
		pod := pi.GetPod()
		if pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed && c.counts(pod) {
			n++
		}
	}
	return n
}

// maybePrune drops the memos of NodeInfos the snapshot no longer holds (a
// deleted or re-created node), once the cache holds more than twice the
// snapshot's nodes plus some slack, so that pruning is O(1) amortized per
// node. The caller holds c.mu for writing.
func (c *Cache) maybePrune() {
	if c.nodes == nil {
		return
	}
	live, err := c.nodes.List()
	if err != nil || len(c.memos) < 2*len(live)+minPruneSlack {
		return
	}
	for ni := range c.memos {
		node := ni.Node()
		if node == nil {
			delete(c.memos, ni)
			continue
		}
		name := node.Name
		if current, err := c.nodes.Get(name); err != nil || current != ni {
			delete(c.memos, ni)
			if c.byName[name] == ni {
				delete(c.byName, name)
			}
		}
	}
}
