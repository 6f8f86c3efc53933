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

package nodeclaims

import (
	"fmt"
	"testing"
)

// filledIndex holds n NodeClaims, as a cluster of n Karpenter nodes would.
func filledIndex(tb testing.TB, n int) *Index {
	tb.Helper()
	ix, _ := newTestIndex(tb)
	for i := range n {
		ix.upsert(claim(fmt.Sprintf("nc-%d", i), fmt.Sprintf("node-%d", i), withExpireAfter("720h")))
	}
	return ix
}

// Filter looks up every node in every cycle: a lookup must not allocate.
func TestForNodeDoesNotAllocate(t *testing.T) {
	ix := filledIndex(t, 100)
	for _, node := range []string{"node-7", "node-without-claim"} {
		if n := testing.AllocsPerRun(100, func() { ix.ForNode(node) }); n != 0 {
			t.Errorf("ForNode(%q) allocates %v times", node, n)
		}
	}
}

func BenchmarkForNode(b *testing.B) {
	ix := filledIndex(b, 1000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			ix.ForNode(nodes[i%len(nodes)])
			i++
		}
	})
}

var nodes = func() []string {
	n := make([]string, 1100) // 100 of them have no NodeClaim
	for i := range n {
		n[i] = fmt.Sprintf("node-%d", i)
	}
	return n
}()
