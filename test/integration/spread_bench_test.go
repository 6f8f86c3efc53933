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
	"testing"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
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
			var total int
			for i := 0; b.Loop(); i++ {
				tc := newTestContext(b)
				// The scheduler_perf profiles serve default-scheduler and count
				// (profile c) pods of namespace service-ns; here they serve our
				// scheduler name, from the test's kubeconfig, in the test's namespace.
				config := perfConfig(b, "scheduler_perf/"+p.file, tc.ns)
				var specs []*v1.Node
				for n := range nodes {
					specs = append(specs, makeNode(fmt.Sprintf("spread-%d-%d", i, n)))
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

// perfConfig reads a scheduler_perf profile for our scheduler name, with the
// namespaces NodeLessPods counts (service-ns there) replaced by ns.
func perfConfig(b *testing.B, path, ns string) *configv1.KubeSchedulerConfiguration {
	b.Helper()
	cfg := shippedConfig(b, path)
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		p.SchedulerName = ptr.To(schedulerName)
		for j, c := range p.PluginConfig {
			if c.Name != "NodeLessPods" {
				continue
			}
			var args v1config.NodeLessPodsArgs
			if err := yaml.UnmarshalStrict(c.Args.Raw, &args); err != nil {
				b.Fatalf("%s: NodeLessPods args: %v", path, err)
			}
			if len(args.Namespaces) > 0 {
				args.Namespaces = []string{ns}
			}
			p.PluginConfig[j] = testconfig.Args(c.Name, &args)
		}
	}
	return cfg
}
