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

package placementpolicy

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

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// benchNodes returns NodeInfos alternately in eu-west-1 and us-east-1, each
// with a handful of other labels, as real nodes carry.
func benchNodes(n int) []fwk.NodeInfo {
	nodes := make([]fwk.NodeInfo, n)
	for i := range nodes {
		region := "eu-west-1"
		if i%2 == 1 {
			region = "us-east-1"
		}
		ni := framework.NewNodeInfo()
		ni.SetNode(node("n", regionKey, region, "kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64",
			"node.kubernetes.io/instance-type", "m5.large", "topology.kubernetes.io/zone", region+"a"))
		nodes[i] = ni
	}
	return nodes
}

// benchPod requires the EU regions in its own node affinity and carries the
// label that the benchmark's rule selects: both plugins filter the same terms.
func benchPod() *v1.Pod {
	return st.MakePod().Name("p").Namespace("default").Label("placement", "eu").
		NodeAffinityIn(regionKey, []string{"eu-west-1", "eu-central-1"}, st.NodeSelectorTypeMatchExpressions).Obj()
}

func benchPolicy(b *testing.B) *PlacementPolicy {
	return newPlugin(b, testArgs(func(a *config.PlacementPolicyArgs) {
		a.Rules = []config.PlacementRule{{Name: "eu-only", PodSelector: selector("placement", "eu"),
			NodeSelector: inRegions("eu-west-1", "eu-central-1"), Action: config.PlacementRequire}}
	}))
}

// BenchmarkFilter compares PlacementPolicy's Filter with in-tree
// NodeAffinity's on the same pod, selector and nodes (half rejected), after
// each plugin's PreFilter: the per-node cost the issue bounds.
func BenchmarkFilter(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	nodes := benchNodes(100)
	pod := benchPod()

	b.Run("plugin=PlacementPolicy", func(b *testing.B) {
		pl := benchPolicy(b)
		state := framework.NewCycleState()
		if _, status := pl.PreFilter(ctx, state, pod, nodes); !status.IsSuccess() {
			b.Fatalf("PreFilter: %v", status)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range nodes {
				pl.Filter(ctx, state, pod, ni)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
	})
	b.Run("plugin=NodeAffinity", func(b *testing.B) {
		p, err := nodeaffinity.New(ctx, &schedconfig.NodeAffinityArgs{}, nil, feature.Features{})
		if err != nil {
			b.Fatal(err)
		}
		na := p.(fwk.FilterPlugin)
		state := framework.NewCycleState()
		if _, status := p.(fwk.PreFilterPlugin).PreFilter(ctx, state, pod, nodes); !status.IsSuccess() {
			b.Fatalf("PreFilter: %v", status)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range nodes {
				na.Filter(ctx, state, pod, ni)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
	})
}

// BenchmarkNoRule is what a pod no rule applies to pays per cycle:
// PreFilter, PreScore and SignPod with six rules configured.
func BenchmarkNoRule(b *testing.B) {
	_, ctx := ktesting.NewTestContext(b)
	pl := newPlugin(b, testArgs(nil), testNamespaces...)
	pod := st.MakePod().Name("p").Namespace("default").Label("app", "web").Obj()
	state := framework.NewCycleState()
	b.Run("PreFilter+PreScore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pl.PreFilter(ctx, state, pod, nil)
			pl.PreScore(ctx, state, pod, nil)
		}
	})
	b.Run("SignPod", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pl.SignPod(ctx, pod)
		}
	})
}
