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

	v1 "k8s.io/api/core/v1"
)

// filledIndex holds n NodeClaims, as a cluster of n Karpenter nodes would;
// every tenth is launching (a providerID, no node name yet).
func filledIndex(tb testing.TB, n int) *Index {
	tb.Helper()
	ix, _ := newTestIndex(tb)
	for i := range n {
		node := fmt.Sprintf("node-%d", i)
		if i%10 == 0 {
			node = ""
		}
		ix.upsert(claim(fmt.Sprintf("nc-%d", i), node, withProviderID(providerID(i)), withExpireAfter("720h")))
	}
	return ix
}

// Filter looks up every node in every cycle: a lookup must not allocate,
// by name, by providerID, or finding none either way.
func TestForNodeDoesNotAllocate(t *testing.T) {
	ix := filledIndex(t, 100)
	for _, node := range []*v1.Node{nodes[7], nodes[10], nodes[1050], k8sNode("node-without-claim", "")} {
		if _, ok := ix.ForNode(node); ok != (node == nodes[7] || node == nodes[10]) {
			t.Errorf("ForNode(%q) found %v", node.Name, ok)
		}
		if n := testing.AllocsPerRun(100, func() { ix.ForNode(node) }); n != 0 {
			t.Errorf("ForNode(%q) allocates %v times", node.Name, n)
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

func providerID(i int) string { return fmt.Sprintf("kwok://node-%d", i) }

var nodes = func() []*v1.Node {
	n := make([]*v1.Node, 1100) // 100 of them have no NodeClaim
	for i := range n {
		n[i] = k8sNode(fmt.Sprintf("node-%d", i), providerID(i))
	}
	return n
}()
