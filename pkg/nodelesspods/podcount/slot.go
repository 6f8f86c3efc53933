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

package podcount

import (
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"
)

// minPublish is the least number of new NodeInfos that makes Count publish
// a new index; fewer wait until one of them is looked up again.
const minPublish = 8

// slot holds a NodeInfo's memo. generation, base and baseCount are written
// together under seq, a sequence lock: odd while a writer stores them, so
// that readers never take a lock. tail is the tail memo, or nil.
type slot struct {
	seq        atomic.Uint32
	generation atomic.Int64
	base       atomic.Int32
	baseCount  atomic.Int32
	tail       atomic.Pointer[tailMemo]
	// tails and scans count this NodeInfo's recounts (see Recounts).
	tails, scans atomic.Uint64
}

// read returns the slot's generation, base and baseCount; ok is false if a
// writer was storing them.
func (s *slot) read() (generation int64, base, baseCount int, ok bool) {
	seq := s.seq.Load()
	generation, base, baseCount = s.generation.Load(), int(s.base.Load()), int(s.baseCount.Load())
	return generation, base, baseCount, seq%2 == 0 && s.seq.Load() == seq
}

// write stores a memo, unless another writer holds the slot (then the next
// Count recounts: a lost write is a miss, never a wrong count).
func (s *slot) write(generation int64, base, baseCount int) {
	seq := s.seq.Load()
	if seq%2 == 1 || !s.seq.CompareAndSwap(seq, seq+1) {
		return
	}
	s.generation.Store(generation)
	s.base.Store(int32(base))
	s.baseCount.Store(int32(baseCount))
	s.seq.Add(1)
}

func (s *slot) recounts() Recounts {
	return Recounts{Tail: s.tails.Load(), Scan: s.scans.Load()}
}

type index map[fwk.NodeInfo]*slot

// slot returns nodeInfo's slot. NodeInfos seen for the first time wait in
// pending, looked up under mu, until enough of them have come to publish a
// new index (amortized O(1) per NodeInfo), or until one of them is looked up
// a second time: in the next cycle, so that no node stays on the locked path.
// orphan is true when the publish that this call made pruned the new slot
// itself (its NodeInfo is not the snapshot's): Count then retires its lookup
// at once, which no sum would read from the slot.
func (c *Cache) slot(nodeInfo fwk.NodeInfo) (s *slot, orphan bool) {
	if s, ok := (*c.published.Load())[nodeInfo]; ok {
		return s, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	published := *c.published.Load()
	if s, ok := published[nodeInfo]; ok {
		return s, false
	}
	if s, ok := c.pending[nodeInfo]; ok {
		if c.live(nodeInfo) {
			c.publish(published)
		}
		return s, false
	}
	s = &slot{}
	c.pending[nodeInfo] = s
	if len(c.pending) >= max(minPublish, len(published)/8) {
		c.publish(published)
		_, kept := (*c.published.Load())[nodeInfo]
		return s, !kept
	}
	return s, false
}

// publish stores an index of the published and pending slots, without those
// of NodeInfos the snapshot no longer holds (deleted nodes, a dry run's
// clones), whose recounts it adds to the retired ones. The caller holds mu.
func (c *Cache) publish(published index) {
	next := make(index, len(published)+len(c.pending))
	for _, from := range []index{published, c.pending} {
		for ni, s := range from {
			if c.live(ni) {
				next[ni] = s
			} else {
				c.retired.add(s.recounts())
			}
		}
	}
	c.published.Store(&next)
	c.pending = index{}
}

func (c *Cache) live(nodeInfo fwk.NodeInfo) bool {
	if c.nodes == nil {
		return true
	}
	node := nodeInfo.Node()
	if node == nil {
		return false
	}
	current, err := c.nodes.Get(node.Name)
	return err == nil && current == nodeInfo
}
