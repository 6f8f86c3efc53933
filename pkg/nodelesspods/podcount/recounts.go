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

// Recounts are the Count calls that the memo did not answer alone. Every
// other Count call was a hit: the generation's count (in a pod-group cycle
// too when no pod was assumed on the node), or a tail memo whose PodInfos
// all matched.
type Recounts struct {
	// Tail: the memo's count plus a scan of the pods after its base (those
	// assumed in a pod-group cycle), or a tail memo extended past the
	// PodInfos it shares with the NodeInfo.
	Tail uint64
	// Scan: every pod of the NodeInfo was scanned.
	Scan uint64
}

// record counts a recount on slot s, a tail or a scan; orphan tells that s
// was pruned in the call that made it (see slot), so no sum reads it any
// more: the recount goes to the retired totals at once.
func (c *Cache) record(s *slot, orphan, tail bool) {
	if orphan {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.retired.add(recountOf(tail))
		return
	}
	if tail {
		s.tails.Add(1)
	} else {
		s.scans.Add(1)
	}
}

func recountOf(tail bool) Recounts {
	if tail {
		return Recounts{Tail: 1}
	}
	return Recounts{Scan: 1}
}

func (r *Recounts) add(o Recounts) {
	r.Tail += o.Tail
	r.Scan += o.Scan
}

// Recounts returns the recounts so far: those of the slots in the index and
// pending, and the retired ones. It takes mu, as a publish does, so no slot
// is counted twice or missed while it is pruned.
func (c *Cache) Recounts() Recounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := c.retired
	for _, from := range []index{*c.published.Load(), c.pending} {
		for _, s := range from {
			sum.add(s.recounts())
		}
	}
	return sum
}
