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
	"testing"

	v1 "k8s.io/api/core/v1"
)

// BenchmarkCount reads a memo (hit) or recounts a node of 30 pods (miss).
func BenchmarkCount(b *testing.B) {
	var pods []*v1.Pod
	for i := range 30 {
		pods = append(pods, makePod(fmt.Sprintf("p%d", i), "n", v1.PodRunning, i%2 == 0))
	}
	ni := makeNodeInfo("n", pods...)
	for _, miss := range []bool{false, true} {
		b.Run(map[bool]string{false: "hit", true: "miss"}[miss], func(b *testing.B) {
			c := New(countedByLabel, nil)
			c.Count(ni)
			for b.Loop() {
				if miss {
					c.Invalidate("n")
				}
				if c.Count(ni) != 15 {
					b.Fatal("wrong count")
				}
			}
		})
	}
}
