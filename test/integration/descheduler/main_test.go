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

// Package descheduler runs the real descheduler (bin/descheduler:
// kubernetes-sigs/descheduler with our PolicyEvictor plugin) next to our
// scheduler binary on a local cluster of its own, as KEP-47 §5 and §7
// (steps 5 and 6) ask: the descheduler evicts the pods of Deployments on
// KWOK nodes, the cluster's kube-controller-manager replaces them and our
// scheduler places the replacements. Evictions are counted by pod UID
// (the DisruptionTarget condition the eviction API sets) and checked
// against the descheduler's own descheduler_pods_evicted_total; cycles are
// its descheduler_loop_duration_seconds_count. Each test logs its
// evictions, cycles and pods per node.
//
//   - TestSpread: NodeLessPods LeastPods with LowNodeUtilization
//     (useDeviationThresholds on pods) spreads 3 full nodes over 3 that
//     join to at most 1 pod apart within a few cycles, evicting each pod
//     at most once and nothing once spread. The crossed pairing, MostPods
//     with the same policy, never converges: the replacements go back to
//     the busy nodes and the descheduler evicts the workload again cycle
//     after cycle.
//   - TestResidency: a PlacementPolicy Require rule holds a Deployment in
//     zone eu; the EU nodes are full, the US ones empty. With DefaultEvictor
//     (nodeFit) alone LowNodeUtilization evicts the same workload over and
//     over and the pods come back to the EU; with PolicyEvictor reading the
//     scheduler's own config, nothing is evicted over as many cycles.
//   - TestMaintenanceDrain: RemovePodsViolatingNodeTaints drains a node
//     tainted for its maintenance window, and our MaintenanceWindow
//     profile puts the replacements on the node outside any window, not on
//     the one whose window opens soon.
//   - TestConsolidation: NodeLessPods MostPods with the shipped
//     consolidate-policy.yaml (HighNodeUtilization) packs the pods of 4
//     thin nodes onto 2 busy ones, each pod evicted once; the LeastPods
//     control spreads the replacements back and is evicted every cycle.
//
// The tests run one after the other (each starts its own scheduler and
// descheduler and leaves no node behind). DESCHEDULER_BINARY and
// SCHEDULER_BINARY name the binaries (make integration-test sets both);
// by default bin/descheduler and bin/kube-scheduler.
package descheduler

import (
	"context"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

var (
	cluster *framework.Cluster
	client  kubernetes.Interface
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Setup{
		Name:        "descheduler-tests",
		BinDir:      "../../../bin",
		KeepLogsEnv: "DESCHEDULER_KEEP_LOGS",
		Start: func(_ context.Context, c *framework.Cluster) error {
			cluster = c
			client = kubernetes.NewForConfigOrDie(c.Config)
			return nil
		},
	}))
}
