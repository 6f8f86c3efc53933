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

package schedulerperf

import (
	"testing"

	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/test/integration/scheduler_perf/harness"
)

const configFile = "performance-config.yaml"

// registry is what our scheduler build adds to the in-tree plugins (with
// the NodePoolQuota CRD installed by its factory).
var registry = harness.Registry()

// BenchmarkPerfScheduling runs the workloads that -perf-scheduling-label-filter
// selects (default "performance": 500Nodes and 5000Nodes) under every profile.
// Run it with -benchtime=1x; select sizes with -bench, e.g.
// 'BenchmarkPerfScheduling/.*/500Nodes'.
func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, configFile, "nodelesspods", registry)
}

// TestSchedulerPerfSmoke runs the Smoke workload (100 nodes, 200 measured
// pods) under every profile and fails if a workload does not complete: every
// measured pod scheduled, no error from the harness.
//
// Upstream's RunIntegrationPerfScheduling takes no plugin registry, so it
// could not load the profiles that enable NodeLessPods: this test runs
// RunBenchmarkPerfScheduling once (b.N is 1 for it) with the
// integration-test label filter instead.
func TestSchedulerPerfSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server per profile")
	}
	if kubeversion.Minor < 37 {
		// The harness parses the whole file, so one such field fails every
		// workload.
		t.Skipf("%s passes templateParams to createAny, which the scheduler_perf harness of %s does not have (since 1.37)", configFile, kubeversion.String())
	}
	saved := perf.PerfSchedulingLabelFilter
	perf.PerfSchedulingLabelFilter = "integration-test"
	t.Cleanup(func() { perf.PerfSchedulingLabelFilter = saved })

	var failed bool
	result := testing.Benchmark(func(b *testing.B) {
		perf.RunBenchmarkPerfScheduling(b, configFile, "smoke", registry)
		// RunBenchmarkPerfScheduling ran each workload in a sub-benchmark;
		// testing.Benchmark discards their output, so record the outcome.
		failed = b.Failed()
	})
	if failed || result.N == 0 {
		t.Fatalf("scheduler_perf Smoke workloads failed (rerun with go test -run '^$' -bench 'BenchmarkPerfScheduling/.*/Smoke' -benchtime=1x -perf-scheduling-label-filter=integration-test for the log): result %+v", result)
	}
	t.Logf("Smoke workloads completed: %v", result)
}
