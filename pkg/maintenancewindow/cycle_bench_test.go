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

package maintenancewindow

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// BenchmarkFailedCycle is what the plugin costs a pod that no node fits
// because all 100 are in a window: PreFilter, Filter on every node, then
// PostFilter with the rejections, one cycle per iteration. It only uses what
// the plugin had before its retries moved to Filter, so the same file
// measures the old code too (where PostFilter planned the retry).
func BenchmarkFailedCycle(b *testing.B) {
	ctx := context.Background()
	nodes := make([]*v1.Node, 100)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("n%02d", i), interval(-1, 1000))
	}
	infos := make([]fwk.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = nodeInfo(n)
	}
	pl, _, h := newPlugin(b, defaultArgs(nil), nodes...)
	pod := pendingPod("p")
	h.addPod(b, pod)
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		pl.PreFilter(ctx, state, pod, nil)
		statuses := framework.NewDefaultNodeToStatus()
		for i, ni := range infos {
			s := pl.Filter(ctx, state, pod, ni)
			s.SetPlugin(Name)
			statuses.Set(nodes[i].Name, s)
		}
		pl.PostFilter(ctx, state, pod, statuses)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
	if pl.pendingRetries() != 1 {
		b.Fatalf("%d retries planned, want 1", pl.pendingRetries())
	}
}
