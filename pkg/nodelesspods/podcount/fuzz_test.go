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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// maxFuzzOps bounds the ops run per input so that each input, and the
// minimization of a failing one, stays fast; with four pods and three nodes
// longer sequences reach no new states.
const maxFuzzOps = 128

// FuzzCache decodes the input into ops over a small alphabet (see decodeOps),
// applies them to the cache and to the model, and fails as soon as they
// disagree or the cache's index is inconsistent. Every case of TestCache is a
// seed, so a plain `go test` runs them through this path too.
func FuzzCache(f *testing.F) {
	f.Add([]byte{})
	for _, tc := range cacheTests {
		f.Add(encodeOps(tc.ops))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := decodeOps(data)
		if len(ops) > maxFuzzOps {
			ops = ops[:maxFuzzOps]
		}
		c, m := New(), newModel()
		for i, o := range ops {
			o.apply(c)
			m.apply(o)
			if msg := compare(c, m, fuzzChecked); msg != "" {
				t.Fatalf("op %d %v:\n%s\nops 0..%d:\n%s", i, o, msg, i, formatOps(ops[:i+1]))
			}
		}
	})
}

// TestFuzzEncoding checks that the seeds of FuzzCache decode to the ops of the
// TestCache cases they come from.
func TestFuzzEncoding(t *testing.T) {
	for _, tc := range cacheTests {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeOps(encodeOps(tc.ops))
			if diff := cmp.Diff(tc.ops, got, cmp.AllowUnexported(op{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decodeOps(encodeOps(ops)) (-want +got):\n%s", diff)
			}
		})
	}
}
