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

package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// BenchmarkPlacementSpread measures placement quality next to the speed
// figures of test/integration/scheduler_perf: on homogeneous nodes, the
// spread (max - min pods per node) each scheduler_perf profile leaves after
// a burst of ReplicaSet pods. It reports the spread as a figure; it asserts
// nothing, because the default profile is allowed to spread less evenly.
//
//	go test ./test/integration -run '^$' -bench PlacementSpread -benchtime 1x
func BenchmarkPlacementSpread(b *testing.B) {
	const nodes, pods = 20, 150
	profiles := []struct{ name, file string }{
		{"a-Default", "config-a-default.yaml"},
		{"b-NodeLessPods", "config-b-nodelesspods.yaml"},
		{"c-NodeLessPodsSelector", "config-c-nodelesspods-selector.yaml"},
		{"d-SoftSpreadHostname", "config-d-softspread.yaml"},
		{"e1-Batching", "config-e1-batching.yaml"},
		{"e2-BatchingNodeLessPods", "config-e2-batching-nodelesspods.yaml"},
	}
	for _, p := range profiles {
		b.Run(p.name, func(b *testing.B) {
			raw, err := os.ReadFile("scheduler_perf/" + p.file)
			if err != nil {
				b.Fatal(err)
			}
			var total int
			for i := 0; b.Loop(); i++ {
				tc := newTestContext(b)
				// The scheduler_perf profiles serve default-scheduler and count
				// (profile c) pods of namespace service-ns; here they serve our
				// scheduler name, from the test's kubeconfig, in the test's namespace.
				config := strings.NewReplacer(
					"schedulerName: default-scheduler", "schedulerName: "+schedulerName,
					"namespaces: [service-ns]", "namespaces: ["+tc.ns+"]",
				).Replace(string(raw)) +
					fmt.Sprintf("clientConnection:\n  kubeconfig: %q\nleaderElection:\n  leaderElect: false\n", adminKubeconfig)
				var specs []nodeSpec
				for n := range nodes {
					specs = append(specs, nodeSpec{name: fmt.Sprintf("spread-%d-%d", i, n)})
				}
				names := tc.createNodes(specs...)
				sched := tc.startScheduler(config)
				// Labeled app=scheduler-perf, which profile c's selector counts.
				podNames := tc.createReplicaSetPods("scheduler-perf", pods, nil)
				tc.waitScheduled(podNames...)
				total += spread(tc.podsPerNode(names, nil))
				sched.Stop()
				tc.cleanup()
			}
			b.ReportMetric(float64(total)/float64(b.N), "spread-pods")
		})
	}
}
