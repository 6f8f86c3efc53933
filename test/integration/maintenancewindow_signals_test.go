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
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// TestMaintenanceWindowConditionPlanned: a node that an admin marks
// MaintenancePlanned=True with kubectl, without a time, gets no pod of a
// MaintenanceWindow profile with the default args (plannedWithoutTime:
// Avoid), its two neighbours get them all, and the rejection names the
// condition. With nodeConditions: false the node gets pods as before.
func TestMaintenanceWindowConditionPlanned(t *testing.T) {
	checkConditionKeepsPodsOff(t, "mwc-planned", window.ConditionMaintenancePlanned, "kernel upgrade")
}

// TestMaintenanceWindowConditionDrainInProgress: the same for a node marked
// DrainInProgress=True with kubectl; then the condition is set False with
// kubectl, and a pod that only fits on that node, rejected before, is
// scheduled within seconds: the condition's update requeues it, where it
// would otherwise wait for the scheduler's 5-minute flush.
func TestMaintenanceWindowConditionDrainInProgress(t *testing.T) {
	tc, marked := checkConditionKeepsPodsOff(t, "mwc-drain", window.ConditionDrainInProgress, "kubectl drain")
	start := time.Now()
	tc.setNodeCondition(marked, window.ConditionDrainInProgress, v1.ConditionFalse, "Manual", "drain cancelled")
	const prompt = 10 * time.Second
	err := wait.PollUntilContextTimeout(tc.ctx, 50*time.Millisecond, prompt, true, func(context.Context) (bool, error) {
		return tc.podNode("pinned") != "", nil
	})
	if err != nil {
		t.Fatalf("pod pinned to %s was not scheduled within %v after %s was set False: the node condition update did not requeue it "+
			"(does MaintenanceWindow register Node/UpdateNodeCondition in EventsToRegister?); it would wait for the 5-minute flush",
			marked, prompt, window.ConditionDrainInProgress)
	}
	if node := tc.podNode("pinned"); node != marked {
		t.Errorf("pod pinned to %s landed on %s", marked, node)
	}
	t.Logf("scheduled %v after %s was set False", time.Since(start).Round(10*time.Millisecond), window.ConditionDrainInProgress)
}

// checkConditionKeepsPodsOff creates three nodes named after prefix and marks
// the first with cond=True (and message) by kubectl:
//   - in a subtest, a profile with nodeConditions: false places pods of a
//     9-replica Deployment on that node too, and a pod pinned there is bound:
//     without the condition source nothing keeps them off;
//   - then the default args (nodeConditions on) place none of the
//     Deployment's pods there and all on its neighbours, and a pod pinned
//     there is rejected with a message that names cond.
//
// It returns the test's context, the pinned pod ("pinned") Pending, and the
// marked node.
func checkConditionKeepsPodsOff(t *testing.T, prefix string, cond v1.NodeConditionType, message string) (*testContext, string) {
	t.Run("control: nodeConditions false", func(t *testing.T) {
		tc := newTestContext(t)
		marked, nodes := tc.markedNodes(prefix+"-ctl", cond, message)
		tc.startScheduler(nodeConditionsOffConfig())
		counts := tc.deploymentPerNode(nodes)
		t.Logf("pods per node with nodeConditions: false: %v", counts)
		if counts[marked] == 0 {
			t.Errorf("with nodeConditions: false no pod landed on %s (%s=True): pods per node %v; the test cannot tell the source's effect", marked, cond, counts)
		}
		tc.createPod(tc.pinned("pinned", marked))
		if node := tc.waitScheduled("pinned")["pinned"]; node != marked {
			t.Errorf("pod pinned to %s landed on %s", marked, node)
		}
	})
	tc := newTestContext(t)
	marked, nodes := tc.markedNodes(prefix, cond, message)
	tc.startScheduler(maintenanceConfig())
	counts := tc.deploymentPerNode(nodes)
	t.Logf("pods per node with the default args: %v", counts)
	for _, n := range nodes {
		if n == marked && counts[n] != 0 {
			t.Errorf("%d pods landed on %s, marked %s=True with kubectl: want none (pods per node %v)", counts[n], n, cond, counts)
		}
		if n != marked && counts[n] == 0 {
			t.Errorf("no pod landed on %s, a neighbour without the condition (pods per node %v)", n, counts)
		}
	}
	tc.createPod(tc.pinned("pinned", marked))
	msg := tc.waitRejected("pinned")
	if !strings.Contains(msg, string(cond)) {
		t.Errorf("FailedScheduling message %q does not name the condition %s", msg, cond)
	}
	t.Logf("FailedScheduling: %s", msg)
	return tc, marked
}

// markedNodes creates nodes prefix-{0,1,2} labelled with their hostnames,
// waits for KWOK to run them, and sets cond=True with reason Manual on
// prefix-0 with kubectl. It returns prefix-0 and all three.
func (tc *testContext) markedNodes(prefix string, cond v1.NodeConditionType, message string) (string, []string) {
	tc.t.Helper()
	nodes := tc.createNodes(makeNode(prefix+"-0", withHostnameLabel()),
		makeNode(prefix+"-1", withHostnameLabel()), makeNode(prefix+"-2", withHostnameLabel()))
	tc.waitNodesRunByKWOK(nodes)
	tc.setNodeCondition(nodes[0], cond, v1.ConditionTrue, "Manual", message)
	return nodes[0], nodes
}

// deploymentPerNode creates a 9-replica Deployment of our scheduler's pods,
// waits until all are bound and returns the pods per node of nodes.
func (tc *testContext) deploymentPerNode(nodes []string) map[string]int {
	tc.t.Helper()
	labels := map[string]string{"app": "web"}
	names := tc.createDeploymentPods(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](9),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tc.makePod("web").Spec},
		},
	})
	tc.waitScheduled(names...)
	return tc.podsPerNode(nodes, nil)
}
