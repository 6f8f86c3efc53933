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

package playground

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// The checks of TestPlayScenarios' rows with steps (pipeline.go's
// applyObjects and runSteps).

// checkRepack: examples/scenarios/repack.yaml; after the Deployment
// is scaled down and up again, the consolidation profile has packed its
// replicas onto one node; the default plugins have not.
func checkRepack(t *testing.T, runs []report.Run, _ string) {
	used := func(nodes []report.NodeResult) (n int, counts []int) {
		for _, node := range nodes {
			counts = append(counts, node.Pods)
			if node.Pods > 0 {
				n++
			}
		}
		return n, counts
	}
	for i, r := range runs {
		if len(r.Result.Steps) != 2 || !strings.HasPrefix(r.Result.Steps[0].Step, "scale Deployment default/web to 2") {
			t.Fatalf("run %d steps %+v, want the 2 scale steps", i+1, r.Result.Steps)
		}
		if len(r.Result.Pods) != 4 {
			t.Errorf("run %d: %d pods at the end, want 4", i+1, len(r.Result.Pods))
		}
		if n, counts := used(r.Result.Steps[1].Nodes); i == 0 && (n != 1 || counts[0]+counts[1]+counts[2] != 4) {
			t.Errorf("consolidation: pods per node after the scale up %v, want all 4 on one node", counts)
		} else if i == 1 && n < 2 {
			t.Errorf("default plugins: pods per node after the scale up %v, want them spread", counts)
		}
	}
	if n, counts := used(runs[0].Result.Steps[0].Nodes); n != 1 {
		t.Errorf("consolidation: pods per node after the scale down %v, want the 2 left on one node", counts)
	}
}

// checkZeroReplicas: workloads of no pods (replicas: 0, a Job of
// parallelism 0) are valid and settle as soon as their controllers have
// seen them, so the objects after them are created and the run ends well
// within its timeout; a scale step to 0 removes a workload's pods.
func checkZeroReplicas(t *testing.T, runs []report.Run, _ string) {
	if diff := cmp.Diff(map[string]string{"last": "worker"}, nodeOf(runs[0].Result)); diff != "" {
		t.Errorf("pods at the end (-want +got):\n%s", diff)
	}
}

// checkAnyKind: a scenario of kinds the playground has no rule for
// (testdata/any-kind.yaml), end to end: every object is applied, in
// dependency order (the Namespace before the objects in it, the CRD before
// its Widget, whatever the file order), the Deployment's pods run with the
// PriorityClass, and the steps scale the Deployment and delete the Widget.
func checkAnyKind(t *testing.T, runs []report.Run, progress string) {
	r := runs[0].Result
	if len(r.Pods) != 1 || r.Pods[0].Node == "" || r.Pods[0].Object != "Deployment/web" || r.Pods[0].Namespace != "payments" {
		t.Errorf("pods %+v, want the one replica of payments/web left by the scale step, bound", r.Pods)
	}
	if len(r.Steps) != 2 || !strings.Contains(r.Steps[1].Step, "delete Widget payments/w") {
		t.Errorf("steps %+v, want the scale and the Widget's delete", r.Steps)
	}
	if !strings.Contains(progress, "waiting for CustomResourceDefinition widgets.example.com to be established") {
		t.Errorf("progress does not say the CRD was waited for:\n%s", progress)
	}
}

// checkDeleteNodes: the shipped profile spreads 6 replicas 2/2/2 over od,
// spot-1 and spot-2; the step deletes both spot nodes and their pods, and
// the 4 replacements join the 2 on od: 6 pods on od, none elsewhere, and
// the progress names the deleted nodes.
func checkDeleteNodes(t *testing.T, runs []report.Run, progress string) {
	r := runs[0].Result
	if len(r.Steps) != 1 {
		t.Fatalf("%d step results, want 1", len(r.Steps))
	}
	onOD := 0
	for _, p := range r.Pods {
		if p.Node != "od" {
			t.Errorf("pod %s on %q after the spot nodes were deleted, want od", p.Name, p.Node)
			continue
		}
		onOD++
	}
	if onOD != 6 {
		t.Errorf("%d pods on od, want the 6 replicas", onOD)
	}
	if want := "deleted nodes spot-1, spot-2 and their pods"; !strings.Contains(progress, want) {
		t.Errorf("progress does not say %q:\n%s", want, progress)
	}
	// The step's nodes hold the facts of the nodes then: od's, none of
	// the deleted spot nodes'.
	for _, n := range r.Steps[0].Nodes {
		capacityType := n.Labels["karpenter.sh/capacity-type"]
		if (n.Name == "od") != (capacityType == "on-demand" && n.CPU.Allocatable > 0 && n.Memory.Allocatable > 0) {
			t.Errorf("after the step, node %s has capacity type %q and allocatable %+v %+v: want od's facts, none of a deleted node's", n.Name, capacityType, n.CPU, n.Memory)
		}
	}
}
