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

// BenchmarkCount counts a node of 30 pods: hit reads the memo of a regular
// cycle; podGroup/hit is a pod-group cycle on a node whose generation was
// seen in a regular cycle (nothing to compare); podGroup/compare one whose
// generation was only seen in pod-group cycles (30 PodInfos compared); miss
// is a new generation (30 pods scanned).
func BenchmarkCount(b *testing.B) {
	var pods []*v1.Pod
	for i := range 30 {
		pods = append(pods, makePod(fmt.Sprintf("p%d", i), "n", v1.PodRunning, i%2 == 0))
	}
	for _, bc := range []struct {
		name                         string
		warmPodGroup, podGroup, miss bool
	}{
		{name: "hit"},
		{name: "podGroup/hit", podGroup: true},
		{name: "podGroup/compare", warmPodGroup: true, podGroup: true},
		{name: "miss", miss: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ni := makeNodeInfo("n", pods...)
			c := New(countedByLabel, nil)
			c.Count(ni, bc.warmPodGroup)
			b.ReportAllocs()
			for b.Loop() {
				if bc.miss {
					ni.Generation++
				}
				if c.Count(ni, bc.podGroup) != 15 {
					b.Fatal("wrong count")
				}
			}
		})
	}
}
