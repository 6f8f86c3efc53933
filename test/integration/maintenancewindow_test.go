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
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow"
)

const maintenanceKey = "scheduling.adminsched.io/maintenance-window"

// maintenanceConfig enables MaintenanceWindow (next to the defaults) at
// weight 1 with its default args.
func maintenanceConfig() *configv1.KubeSchedulerConfiguration {
	return schedulerConfig(profile("MaintenanceWindow", 1, nil))
}

// windowFrom is a maintenance window from now+from to now+to, RFC 3339.
func windowFrom(from, to time.Duration) string {
	now := time.Now().UTC()
	return now.Add(from).Format(time.RFC3339) + "/" + now.Add(to).Format(time.RFC3339)
}

// withWindow gives the node a maintenance window (as windowFrom formats it).
func withWindow(window string) nodeOption {
	return withAnnotation(maintenanceKey, window)
}

// annotateNode sets (or, with value "", removes) the node's window.
func (tc *testContext) annotateNode(node, value string) {
	tc.t.Helper()
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, maintenanceKey)
	if value != "" {
		body = fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, maintenanceKey, value)
	}
	if _, err := adminClient.CoreV1().Nodes().Patch(tc.ctx, node, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		tc.t.Fatalf("annotating node %s: %v", node, err)
	}
}

// TestMaintenanceWindowSoonestGetsFewest checks the Score: the node whose
// window opens soonest receives the fewest pods, a node without a window
// the most.
func TestMaintenanceWindowSoonestGetsFewest(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(makeNode("mw-soon", withWindow(windowFrom(time.Hour, 2*time.Hour))),
		makeNode("mw-later", withWindow(windowFrom(20*time.Hour, 21*time.Hour))), makeNode("mw-free"))
	// Weight 1: the resource scores spread the pods, the windows skew them.
	tc.startScheduler(maintenanceConfig())
	var names []string
	for i := range 30 {
		names = append(names, tc.createPod(tc.makePod(fmt.Sprintf("p-%d", i))).Name)
	}
	tc.waitScheduled(names...)
	counts := tc.podsPerNode(nodes, nil)
	if !(counts["mw-soon"] < counts["mw-later"] && counts["mw-later"] < counts["mw-free"]) {
		t.Errorf("pods per node %v: want mw-soon (window in 1h) < mw-later (in 20h) < mw-free (none)", counts)
	}
	t.Logf("pods per node: %v", counts)
}

// TestMaintenanceWindowRemovedLetsPodSchedule checks the queueing hint: a
// pod rejected by the only node's window is scheduled once the annotation
// is removed, without waiting for the unschedulable timeout.
func TestMaintenanceWindowRemovedLetsPodSchedule(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(makeNode("mw-only", withWindow(windowFrom(-time.Hour, 2*time.Hour))))
	tc.startScheduler(maintenanceConfig())
	tc.createPod(tc.makePod("waiting"))
	msg := tc.failedSchedulingMessage("waiting")
	if !strings.Contains(msg, "node is in a maintenance window until") {
		t.Fatalf("FailedScheduling message %q does not name the window", msg)
	}
	start := time.Now()
	tc.annotateNode("mw-only", "")
	if node := tc.waitScheduled("waiting")["waiting"]; node != "mw-only" {
		t.Errorf("pod landed on %s, want mw-only", node)
	}
	t.Logf("scheduled %v after the window was removed", time.Since(start).Round(100*time.Millisecond))
}

// TestMaintenanceWindowEndRetriesPod measures how long after its window
// ends a rejected pod is scheduled. No cluster event marks the end; the
// plugin activates the pod then (Filter plans it). Without it the pod would wait
// for the scheduler's unschedulable timeout (5 minutes, checked every 30 s).
func TestMaintenanceWindowEndRetriesPod(t *testing.T) {
	tc := newTestContext(t)
	// RFC 3339 has whole seconds: the window ends 3 to 4 s from now.
	end := time.Now().UTC().Add(4 * time.Second).Truncate(time.Second)
	tc.createNodes(makeNode("mw-ending", withWindow(time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)+"/"+end.Format(time.RFC3339))))
	tc.startScheduler(maintenanceConfig())
	tc.createPod(tc.makePod("waiting"))
	if msg := tc.failedSchedulingMessage("waiting"); !strings.Contains(msg, "maintenance window until "+end.Format(time.RFC3339)) {
		t.Fatalf("FailedScheduling message %q does not name the window's end", msg)
	}
	tc.waitScheduled("waiting")
	late := time.Since(end)
	t.Logf("scheduled %v after the window ended", late.Round(100*time.Millisecond))
	if late > 30*time.Second {
		t.Errorf("scheduled %v after the window ended: the retry at the window's end did not happen", late)
	}
}

// avoidingConfig is maintenanceConfig with avoidWithin 2h: a node whose
// window opens within two hours is filtered for pods of unknown runtime.
func avoidingConfig() *configv1.KubeSchedulerConfiguration {
	return schedulerConfig(profile("MaintenanceWindow", 1, &v1config.MaintenanceWindowArgs{AvoidWithin: &metav1.Duration{Duration: 2 * time.Hour}}))
}

// TestMaintenanceWindowJobUsesTheHourBeforeTheWindow: the only node's window
// opens in an hour. A Job's pod with a 20-minute activeDeadlineSeconds (and
// one that declares 20m in the expected-runtime annotation) ends before it,
// with the 10-minute margin, and is bound there; a Deployment's pod (no
// deadline) is rejected.
func TestMaintenanceWindowJobUsesTheHourBeforeTheWindow(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(makeNode("mw-soon", withWindow(windowFrom(time.Hour, 3*time.Hour))))
	tc.startScheduler(avoidingConfig())
	job := tc.makePod("job")
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](1200)
	tc.createPod(job)
	declared := tc.makePod("declared")
	declared.Annotations = map[string]string{maintenancewindow.ExpectedRuntimeAnnotation: "20m"}
	tc.createPod(declared)
	tc.createPod(tc.makePod("deployment"))
	for name, node := range tc.waitScheduled("job", "declared") {
		if node != "mw-soon" {
			t.Errorf("pod %s landed on %s, want mw-soon", name, node)
		}
	}
	if msg := tc.failedSchedulingMessage("deployment"); !strings.Contains(msg, "node's maintenance window opens at") {
		t.Errorf("FailedScheduling message %q does not name the window", msg)
	}
}

// TestMaintenanceWindowGKELabel: a node that GKE labels with a maintenance
// starting in 30 minutes is filtered for a pod of unknown runtime, as one
// with the annotation is; the label's value is Unix epoch seconds.
func TestMaintenanceWindowGKELabel(t *testing.T) {
	tc := newTestContext(t)
	start := time.Now().Add(30 * time.Minute).Truncate(time.Second).UTC()
	tc.createNodes(makeNode("mw-gke", withLabels(map[string]string{
		maintenancewindow.GKEMaintenanceLabel: strconv.FormatInt(start.Unix(), 10),
	})))
	tc.startScheduler(avoidingConfig())
	tc.createPod(tc.makePod("deployment"))
	want := "node's maintenance window opens at " + start.Format(time.RFC3339) + " (until " + start.Add(time.Hour).Format(time.RFC3339) + ")"
	if msg := tc.failedSchedulingMessage("deployment"); !strings.Contains(msg, want) {
		t.Errorf("FailedScheduling message %q, want it to contain %q", msg, want)
	}
}
