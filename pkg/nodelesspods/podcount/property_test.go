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
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	propUIDs  = []types.UID{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"}
	propNodes = []string{"n1", "n2", "n3", "n4"}
	// propChecked are the nodes compared after every op: the alphabet, a
	// node never used, and "".
	propChecked = append([]string{"unknown", ""}, propNodes...)
)

// randomOp draws the next op. It peeks at the model only to make Unreserve of
// the reserved node, the interesting case, frequent.
func randomOp(r *rand.Rand, m *model) op {
	uid := propUIDs[r.IntN(len(propUIDs))]
	node := propNodes[r.IntN(len(propNodes))]
	podNode := node
	if r.IntN(5) == 0 {
		podNode = ""
	}
	phase := v1.PodRunning
	switch p := r.IntN(20); {
	case p < 4:
		phase = v1.PodPending
	case p == 4:
		phase = v1.PodSucceeded
	case p == 5:
		phase = v1.PodFailed
	}
	counted := r.IntN(10) != 0
	tombstone := r.IntN(2) == 0

	switch k := r.IntN(100); {
	case k < 25:
		return reserve(uid, node)
	case k < 40:
		if n := m.reservedOn[uid]; n != "" && r.IntN(2) == 0 {
			return unreserve(uid, n)
		}
		return unreserve(uid, node)
	case k < 50:
		return bind(uid, node)
	case k < 54:
		return forget(uid)
	case k < 56:
		return forgetNode(node)
	case k < 68:
		return observe(uid, podNode, phase, counted)
	case k < 78:
		return podAdd(uid, podNode, phase, counted)
	case k < 88:
		return podUpdate(uid, podNode, phase, counted)
	case k < 92:
		return podDelete(uid, node, tombstone)
	case k < 94:
		return nodeDelete(node, tombstone)
	default:
		// Reserve on the node the pod is bound to, or elsewhere.
		if n := m.boundTo[uid]; n != "" && r.IntN(2) == 0 {
			return reserve(uid, n)
		}
		return reserve(uid, node)
	}
}

// TestCacheMatchesModel applies seeded random op sequences to the cache and to
// the model and compares every Count and Len after each op.
func TestCacheMatchesModel(t *testing.T) {
	const numOps = 4000
	for _, seed := range []uint64{1, 2, 3, 7, 42, 1234, 99991, 20260701} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
			c, m := New(), newModel()
			ops := make([]op, 0, numOps)
			kinds := map[opKind]int{}
			maxLen, maxCount := 0, 0
			for i := range numOps {
				o := randomOp(r, m)
				ops = append(ops, o)
				kinds[o.kind]++
				o.apply(c)
				m.apply(o)
				if msg := compare(c, m, propChecked); msg != "" {
					t.Fatalf("seed %d, op %d %v:\n%s\nops 0..%d:\n%s", seed, i, o, msg, i, formatOps(ops))
				}
				maxLen = max(maxLen, m.len())
				for _, n := range propNodes {
					maxCount = max(maxCount, m.count(n))
				}
			}
			// Guard against a generator that never reaches interesting states.
			for k := range numOpKinds {
				if kinds[k] == 0 {
					t.Errorf("seed %d: op kind %v never drawn", seed, op{kind: k})
				}
			}
			if maxLen < len(propUIDs)/2 || maxCount < 2 {
				t.Errorf("seed %d: the sequence never got busy: max Len %d, max Count %d", seed, maxLen, maxCount)
			}
		})
	}
}
