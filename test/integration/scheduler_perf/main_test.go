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

// Package schedulerperf runs upstream's scheduler_perf harness
// (k8s.io/kubernetes/test/integration/scheduler_perf) with NodeLessPods in the
// plugin registry, on the workloads and profiles of performance-config.yaml.
// The harness starts etcd (found on PATH) and an in-process kube-apiserver
// for every workload. See doc/performance.md.
package schedulerperf

import (
	"os"
	"testing"

	"github.com/adminsched/scheduler-plugins/test/integration/scheduler_perf/harness"
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, "../../../bin", "../../../_output/scheduler_perf"))
}
