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
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

const regionKey = "topology.kubernetes.io/region"

// benchNodes returns NodeInfos alternately in eu-west-1 and us-east-1, each
// announcing the window value (none when empty).
func benchNodes(n int, value string) []fwk.NodeInfo {
	nodes := make([]fwk.NodeInfo, n)
	for i := range nodes {
		region := "eu-west-1"
		if i%2 == 1 {
			region = "us-east-1"
		}
		nd := node("n", value)
		nd.Labels = map[string]string{regionKey: region, "kubernetes.io/os": "linux"}
		nodes[i] = nodeInfo(nd)
	}
	return nodes
}

// BenchmarkFilter compares MaintenanceWindow's Filter with in-tree
// NodeAffinity's on the same 100 nodes and pod, as scheduler_perf's
// MaintenanceWindow case does: every node announces a window far ahead.
func BenchmarkFilter(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	pod := st.MakePod().Name("p").Namespace("default").
		NodeAffinityIn(regionKey, []string{"eu-west-1", "eu-central-1"}, st.NodeSelectorTypeMatchExpressions).Obj()
	far := "2099-01-01T00:00:00Z/2099-01-01T04:00:00Z"

	run := func(b *testing.B, filter func(fwk.NodeInfo) *fwk.Status, nodes []fwk.NodeInfo) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range nodes {
				filter(ni)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
	}
	for _, c := range []struct{ name, value string }{{"window=far", far}, {"window=none", ""}} {
		b.Run("plugin=MaintenanceWindow/"+c.name, func(b *testing.B) {
			pl, _, _ := newPlugin(b, defaultArgs(nil))
			nodes := benchNodes(100, c.value)
			run(b, func(ni fwk.NodeInfo) *fwk.Status { return pl.Filter(ctx, nil, pod, ni) }, nodes)
		})
	}
	b.Run("plugin=NodeAffinity", func(b *testing.B) {
		p, err := nodeaffinity.New(ctx, &schedconfig.NodeAffinityArgs{}, nil, feature.Features{})
		if err != nil {
			b.Fatal(err)
		}
		nodes := benchNodes(100, far)
		state := framework.NewCycleState()
		if _, status := p.(fwk.PreFilterPlugin).PreFilter(ctx, state, pod, nodes); !status.IsSuccess() {
			b.Fatalf("PreFilter: %v", status)
		}
		na := p.(fwk.FilterPlugin)
		run(b, func(ni fwk.NodeInfo) *fwk.Status { return na.Filter(ctx, state, pod, ni) }, nodes)
	})
}

// BenchmarkScore is MaintenanceWindow's Score per node with a far window.
func BenchmarkScore(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	pl, _, _ := newPlugin(b, defaultArgs(nil))
	nodes := benchNodes(100, "2099-01-01T00:00:00Z/2099-01-01T04:00:00Z")
	pod := &v1.Pod{}
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range nodes {
			pl.Score(ctx, nil, pod, ni)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
}
