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

package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// BenchmarkPlan is one sync's plan on a large cluster: 5,000 nodes, of
// which 10 pools of 50; 10 quotas, one team each; 20,000 of the teams'
// pods bound (a tenth of them in their pool) and gated pods waiting, half
// pool-bound by nodeSelector and half by a node affinity the quota's
// labels do not spell (the case that tests every node).
func BenchmarkPlan(b *testing.B) {
	for _, gated := range []int{100, 1000} {
		b.Run(fmt.Sprintf("gated=%d", gated), func(b *testing.B) {
			in := largeView(5000, 10, 20000, gated)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p := makePlan(in)
				if len(p.lift)+len(p.hold) != gated {
					b.Fatalf("%d lifted and %d held, want %d gated pods decided", len(p.lift), len(p.hold), gated)
				}
			}
		})
	}
}

func largeView(nodes, pools, bound, gated int) *view {
	in := &view{
		namespaces: map[string]labels.Set{},
		gated:      hasGate,
		invalid:    func(*v1alpha1.NodePoolQuota) string { return "" },
	}
	poolNodes := 50
	for i := range nodes {
		l := map[string]string{"kubernetes.io/hostname": fmt.Sprintf("n%d", i)}
		if p := i / poolNodes; p < pools {
			l["pool"] = fmt.Sprintf("p%d", p)
		}
		in.nodes = append(in.nodes, node(fmt.Sprintf("n%d", i), l))
	}
	for p := range pools {
		ns := fmt.Sprintf("team-%d", p)
		in.namespaces[ns] = nil
		in.quotas = append(in.quotas, npq(fmt.Sprintf("q%d", p), map[string]string{"pool": fmt.Sprintf("p%d", p)}, ns, []string{ns}, gpus(1000)))
	}
	for i := range bound {
		p := i % pools
		pod := gatedPod(fmt.Sprintf("team-%d", p), fmt.Sprintf("bound-%d", i), i, 1, withGates())
		pod.Spec.NodeName = fmt.Sprintf("n%d", (i*7)%nodes)
		in.pods = append(in.pods, pod)
	}
	for i := range gated {
		p := i % pools
		opt := withNodeSelector(map[string]string{"pool": fmt.Sprintf("p%d", p)})
		if i%2 == 1 {
			// The pool's nodes by hostname: pool-bound, but only a scan of
			// the nodes shows it.
			var hosts []string
			for n := p * poolNodes; n < (p+1)*poolNodes; n++ {
				hosts = append(hosts, fmt.Sprintf("n%d", n))
			}
			opt = withAffinityIn("kubernetes.io/hostname", hosts...)
		}
		in.pods = append(in.pods, gatedPod(fmt.Sprintf("team-%d", p), fmt.Sprintf("gated-%d", i), bound+i, 1, opt))
	}
	return in
}
