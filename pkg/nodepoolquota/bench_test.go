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

package nodepoolquota

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// BenchmarkPreFilterTeamPod is the cost of a pod under a quota: PreFilter
// counts its team's usage over a snapshot of 500 nodes, 100 of them in the
// pool, each holding 10 pods of three teams.
func BenchmarkPreFilterTeamPod(b *testing.B) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 500 {
		pool := "general"
		if i < 100 {
			pool = "h100"
		}
		n := node(fmt.Sprintf("n%d", i), "pool", pool)
		nodes = append(nodes, n)
		for j := range 10 {
			p := gpuPod(fmt.Sprintf("p%d-%d", i, j), []string{"a-1", "b-1", "default"}[j%3], 0, 0)
			p.Spec.NodeName = n.Name
			pods = append(pods, p)
		}
	}
	h := newHarness(b, nil, []*v1alpha1.NodePoolQuota{h100("10000")}, nodes, pods...)
	pod := gpuPod("p", "a-1", 1, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, s := h.pl.PreFilter(h.ctx, framework.NewCycleState(), pod, nil); !s.IsSuccess() {
			b.Fatal(s)
		}
	}
}
