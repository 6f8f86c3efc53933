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
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/controller"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// TestMaintenanceWindowController runs bin/maintenancewindow-controller with
// the admin's kubeconfig and a scheduler config of MaintenanceWindow's
// args, next to a default-scheduler (the defaults, no MaintenanceWindow):
//   - node "open" is in its window when the controller starts: a pod of the
//     default scheduler pinned there before is bound (the default
//     scheduler does not read windows), and the node is tainted;
//   - node "later" has a window 3 h away: MaintenancePlanned=True, ours;
//   - node "soon" has a window opening ~15 s after its creation, for 20 s:
//     the taint (our value) and MaintenanceInProgress=True come within 2 s
//     after it opens, not before, and both go within 2 s after it ends;
//     while it is open the default scheduler binds no pod there, and a pod
//     pinned there waits until the taint goes, then is bound;
//   - node "admin" carries an admin's taint of our key (another value) and
//     an admin's MaintenancePlanned (reason Manual): neither is ever
//     changed.
func TestMaintenanceWindowController(t *testing.T) {
	tc := newTestContext(t)
	bin := maintenanceInstallBinary(t)
	label := map[string]string{"mw-controller-test": tc.ns}
	// RFC 3339 has whole seconds.
	start := time.Now().UTC().Add(15 * time.Second).Truncate(time.Second)
	end := start.Add(20 * time.Second)
	adminTaint := v1.Taint{Key: maintenanceKey, Value: "admin", Effect: v1.TaintEffectNoSchedule}
	nodes := tc.createNodes(
		makeNode("mwctl-soon", withHostnameLabel(), withLabels(label), withWindow(start.Format(time.RFC3339)+"/"+end.Format(time.RFC3339))),
		makeNode("mwctl-later", withHostnameLabel(), withLabels(label), withWindow(windowFrom(3*time.Hour, 4*time.Hour))),
		makeNode("mwctl-admin", withHostnameLabel(), withLabels(label), func(n *v1.Node) { n.Spec.Taints = []v1.Taint{adminTaint} }),
		makeNode("mwctl-open", withHostnameLabel(), withLabels(label), withWindow(windowFrom(-time.Minute, time.Hour))),
	)
	soon, later, admin, open := nodes[0], nodes[1], nodes[2], nodes[3]
	tc.waitNodesRunByKWOK(nodes)
	tc.setNodeCondition(admin, controller.ConditionMaintenancePlanned, v1.ConditionTrue, "Manual", "the admin's own")
	adminCondition := *nodeCondition(tc.getNode(admin), controller.ConditionMaintenancePlanned)
	rec := tc.recordNodes(label)
	tc.startScheduler(schedulerConfig(configv1.KubeSchedulerProfile{SchedulerName: ptr.To(v1.DefaultSchedulerName)}))

	// Without the controller the default scheduler binds a pod to a node in
	// its window: the window alone keeps nothing off.
	tc.createPod(defaultSchedulerPod(tc.pinned("before", open)))
	tc.waitScheduled("before")

	started := time.Now()
	proc := tc.runMaintenanceController(bin)
	at := rec.waitFor(t, open, started, 10*time.Second, ownedTaint)
	t.Logf("node %s, in its window, tainted %v after the controller started", open, at.Sub(started).Round(10*time.Millisecond))
	planned := rec.waitFor(t, later, started, 10*time.Second, ownedCondition(controller.ConditionMaintenancePlanned, controller.ReasonPlanned))
	t.Logf("node %s, window in 3h: MaintenancePlanned %v after the controller started", later, planned.Sub(started).Round(10*time.Millisecond))

	if time.Now().After(start) {
		t.Fatalf("the test's set-up took until after %s's window opened at %s", soon, start)
	}
	tainted := rec.waitFor(t, soon, started, time.Until(start)+10*time.Second, ownedTaint)
	inProgress := rec.waitFor(t, soon, started, time.Second, ownedCondition(controller.ConditionMaintenanceInProgress, controller.ReasonOpen))
	t.Logf("node %s: window opened at %s; tainted %v after, MaintenanceInProgress %v after", soon, start.Format(time.RFC3339),
		tainted.Sub(start).Round(10*time.Millisecond), inProgress.Sub(start).Round(10*time.Millisecond))
	for what, at := range map[string]time.Time{"tainted": tainted, "marked MaintenanceInProgress": inProgress} {
		if at.Before(start) || at.Sub(start) > 2*time.Second {
			t.Errorf("node %s %s at %s, want within 2 s after its window opened at %s", soon, what, at.Format(time.RFC3339Nano), start)
		}
	}

	// While the window is open the taint keeps the default scheduler's pods
	// off the node; a pod pinned there waits.
	var free []string
	for i := range 6 {
		free = append(free, tc.createPod(defaultSchedulerPod(tc.makePod(fmt.Sprintf("free-%d", i)))).Name)
	}
	tc.createPod(defaultSchedulerPod(tc.pinned("pinned", soon)))
	for name, node := range tc.waitScheduled(free...) {
		if node == soon {
			t.Errorf("pod %s of the default scheduler was bound to %s in its window", name, node)
		}
	}
	if msg := tc.waitRejected("pinned"); !strings.Contains(msg, "untolerated taint") {
		t.Errorf("FailedScheduling message %q of the pod pinned to %s does not name a taint", msg, soon)
	}
	if time.Now().After(end) {
		t.Fatalf("the checks in %s's window ran past its end at %s", soon, end)
	}

	untainted := rec.waitFor(t, soon, end.Add(-time.Second), time.Until(end)+10*time.Second, func(n *v1.Node) bool { return !ownedTaint(n) })
	cleared := rec.waitFor(t, soon, end.Add(-time.Second), time.Second, func(n *v1.Node) bool { return len(ownedConditions(n)) == 0 })
	t.Logf("node %s: window ended at %s; untainted %v after, conditions removed %v after", soon, end.Format(time.RFC3339),
		untainted.Sub(end).Round(10*time.Millisecond), cleared.Sub(end).Round(10*time.Millisecond))
	for what, at := range map[string]time.Time{"untainted": untainted, "cleared of its conditions": cleared} {
		if at.Before(end) || at.Sub(end) > 2*time.Second {
			t.Errorf("node %s %s at %s, want within 2 s after its window ended at %s", soon, what, at.Format(time.RFC3339Nano), end)
		}
	}
	if node := tc.waitScheduled("pinned")["pinned"]; node != soon {
		t.Errorf("pod pinned to %s was bound to %s", soon, node)
	}
	t.Logf("pod pinned to %s bound %v after the taint went", soon, time.Since(untainted).Round(10*time.Millisecond))

	rec.checkUntouched(t, admin, adminTaint, adminCondition)
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the controller was refused %d times (first: %q)", len(lines), lines[0])
	}
}

// defaultSchedulerPod gives pod to the default scheduler.
func defaultSchedulerPod(pod *v1.Pod) *v1.Pod {
	pod.Spec.SchedulerName = v1.DefaultSchedulerName
	return pod
}

// ownedTaint: node carries the controller's taint.
func ownedTaint(node *v1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == controller.TaintKey && t.Value == controller.TaintValue && t.Effect == v1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

// ownedCondition: node carries typ=True with the controller's reason.
func ownedCondition(typ v1.NodeConditionType, reason string) func(*v1.Node) bool {
	return func(node *v1.Node) bool {
		c := nodeCondition(node, typ)
		return c != nil && c.Status == v1.ConditionTrue && c.Reason == reason
	}
}

// ownedConditions lists node's conditions of the controller's reasons.
func ownedConditions(node *v1.Node) []string {
	var out []string
	for _, c := range node.Status.Conditions {
		switch c.Reason {
		case controller.ReasonOpen, controller.ReasonPlanned, controller.ReasonDrifted, controller.ReasonDisrupting:
			out = append(out, string(c.Type)+"="+string(c.Status)+"/"+c.Reason)
		}
	}
	return out
}

// runMaintenanceController runs the controller as its Deployment does
// (manifests/maintenancewindow-controller), with the admin's kubeconfig,
// its Lease in the test's namespace and a scheduler config whose profile
// enables MaintenanceWindow with its defaults; it waits for the Lease.
func (tc *testContext) runMaintenanceController(bin string) *framework.Process {
	t := tc.t
	t.Helper()
	configPath := testconfig.Write(t, maintenanceConfig())
	args, port := tc.servingArgs()
	proc := tc.startProcess("maintenancewindow-controller", bin, append([]string{"run", "--config=" + configPath,
		"--kubeconfig=" + adminKubeconfig, "--leader-elect=true", "--leader-elect-resource-namespace=" + tc.ns,
		"--http-address=", "--v=2"}, args...)...)
	checkHealthz(t, tc.ctx, proc, port)
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(ctx, "maintenancewindow-controller", metav1.GetOptions{})
		return err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") != "", nil
	})
	if err != nil {
		t.Fatalf("the controller did not take its Lease %s/maintenancewindow-controller: %v\n%s", tc.ns, err, proc.Output())
	}
	return proc
}

// nodeRecorder keeps every version of some nodes a watch delivered, with
// when it arrived, to time changes and to prove that something never
// changed.
type nodeRecorder struct {
	mu   sync.Mutex
	seen []seenNode
}

type seenNode struct {
	at   time.Time
	node *v1.Node
}

// recordNodes records the nodes that carry labels until the test ends.
func (tc *testContext) recordNodes(labels map[string]string) *nodeRecorder {
	tc.t.Helper()
	w, err := adminClient.CoreV1().Nodes().Watch(tc.ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: labels})})
	if err != nil {
		tc.t.Fatalf("watching nodes: %v", err)
	}
	tc.t.Cleanup(w.Stop)
	r := &nodeRecorder{}
	go func() {
		for ev := range w.ResultChan() {
			if node, ok := ev.Object.(*v1.Node); ok {
				r.mu.Lock()
				r.seen = append(r.seen, seenNode{at: time.Now(), node: node})
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// waitFor returns when node name came to satisfy cond, as of since: the
// time of the last version seen at or before since if that satisfies cond
// already (a change that came too early shows as one before since), else
// that of the first later version that does. It waits for timeout at most.
func (r *nodeRecorder) waitFor(t testing.TB, name string, since time.Time, timeout time.Duration, cond func(*v1.Node) bool) time.Time {
	t.Helper()
	var found time.Time
	var last *v1.Node
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range r.seen {
			if s.node.Name != name {
				continue
			}
			last = s.node
			switch {
			case !s.at.After(since):
				found = time.Time{}
				if cond(s.node) {
					found = s.at
				}
			case !found.IsZero():
				return true, nil
			case cond(s.node):
				found = s.at
				return true, nil
			}
		}
		return !found.IsZero(), nil
	})
	if found.IsZero() {
		var taints []v1.Taint
		var conditions []v1.NodeCondition
		if last != nil {
			taints, conditions = last.Spec.Taints, last.Status.Conditions
		}
		t.Fatalf("node %s did not come to the state waited for within %v after %s; last seen taints %+v, conditions %+v",
			name, timeout, since.Format(time.RFC3339Nano), taints, conditions)
	}
	return found
}

// checkUntouched: every version of node name seen carried taint and
// condition as they were (the condition's times included), and no other
// taint of taint's key and effect.
func (r *nodeRecorder) checkUntouched(t testing.TB, name string, taint v1.Taint, condition v1.NodeCondition) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := 0
	for _, s := range r.seen {
		if s.node.Name != name {
			continue
		}
		versions++
		var same []v1.Taint
		for _, have := range s.node.Spec.Taints {
			if have.Key == taint.Key && have.Effect == taint.Effect {
				same = append(same, have)
			}
		}
		if len(same) != 1 || same[0].Value != taint.Value {
			t.Errorf("node %s at %s has taints %+v of key %s, want only the admin's %+v", name, s.at.Format(time.RFC3339Nano), same, taint.Key, taint)
		}
		if got := nodeCondition(s.node, condition.Type); got == nil || !got.LastTransitionTime.Equal(&condition.LastTransitionTime) ||
			got.Status != condition.Status || got.Reason != condition.Reason || got.Message != condition.Message {
			t.Errorf("node %s at %s has condition %s %+v, want the admin's %+v", name, s.at.Format(time.RFC3339Nano), condition.Type, got, condition)
		}
	}
	if versions == 0 {
		t.Errorf("no version of node %s was recorded", name)
	}
}
