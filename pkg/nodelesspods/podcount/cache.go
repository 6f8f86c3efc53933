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
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// minPruneSlack keeps small clusters from pruning on every new node.
const minPruneSlack = 64

// memo is immutable once published, so readers need no lock to use it.
type memo struct {
	generation int64
	pods       int
	count      int
}

// slot holds a node's current memo; nil means "recompute".
type slot struct {
	memo atomic.Pointer[memo]
}

// Cache is safe for concurrent use: Count on different nodes runs in
// parallel, and readers only take a read lock. The zero value is not usable:
// call New.
type Cache struct {
	counts func(*v1.Pod) bool
	// nodes tells which node names still exist, to drop memos of deleted
	// nodes; nil keeps every memo.
	nodes fwk.NodeInfoLister

	mu    sync.RWMutex
	slots map[string]*slot
}

// New returns an empty cache that counts the pods for which counts returns
// true. nodes, usually the scheduler's snapshot, lets the cache forget the
// nodes that are gone.
func New(counts func(*v1.Pod) bool, nodes fwk.NodeInfoLister) *Cache {
	return &Cache{counts: counts, nodes: nodes, slots: make(map[string]*slot)}
}

// Count returns how many counted pods nodeInfo holds. nodeInfo.Node() must not
// be nil. A hit takes a read lock and does not allocate.
func (c *Cache) Count(nodeInfo fwk.NodeInfo) int {
	name := nodeInfo.Node().Name
	generation, pods := nodeInfo.GetGeneration(), len(nodeInfo.GetPods())
	c.mu.RLock()
	s := c.slots[name]
	c.mu.RUnlock()
	if s != nil {
		if m := s.memo.Load(); m != nil && m.generation == generation && m.pods == pods {
			return m.count
		}
	} else {
		s = c.addSlot(name)
	}
	n := c.scan(nodeInfo)
	s.memo.Store(&memo{generation: generation, pods: pods, count: n})
	return n
}

// Invalidate drops nodeName's memo: its next Count scans the NodeInfo again.
func (c *Cache) Invalidate(nodeName string) {
	c.mu.RLock()
	s := c.slots[nodeName]
	c.mu.RUnlock()
	if s != nil {
		s.memo.Store(nil)
	}
}

// Len returns how many nodes have a slot.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.slots)
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

// addSlot returns nodeName's slot, creating it. Creating one may prune the
// slots of deleted nodes: only when the cache holds more than twice the
// snapshot's nodes (plus some slack), so pruning is O(1) amortized per node.
func (c *Cache) addSlot(nodeName string) *slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.slots[nodeName]; ok {
		return s
	}
	s := &slot{}
	c.slots[nodeName] = s
	if c.nodes != nil {
		if live, err := c.nodes.List(); err == nil && len(c.slots) > 2*len(live)+minPruneSlack {
			for name := range c.slots {
				if _, err := c.nodes.Get(name); err != nil && name != nodeName {
					delete(c.slots, name)
				}
			}
		}
	}
	return s
}
