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
	"os/exec"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

// nodeConditionsOffConfig enables MaintenanceWindow at weight 1 with its
// defaults but nodeConditions: false, which stops it reading the node
// lifecycle conditions.
func nodeConditionsOffConfig() *configv1.KubeSchedulerConfiguration {
	return schedulerConfig(profile("MaintenanceWindow", 1, &v1config.MaintenanceWindowArgs{NodeConditions: ptr.To(false)}))
}

// kubectl runs bin/kubectl (or KUBECTL) as the cluster admin and returns
// its output; the test fails when it fails.
func (tc *testContext) kubectl(args ...string) string {
	tc.t.Helper()
	bin := toolBinary(tc.t, "KUBECTL", "kubectl", "this test sets node conditions with kubectl")
	out, err := exec.CommandContext(tc.ctx, bin, append([]string{"--kubeconfig", adminKubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		tc.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// setNodeCondition sets one condition of node's status with kubectl, as an
// admin or a maintenance tool would: a strategic merge patch merges the
// conditions by type, so the others (Ready) stay.
func (tc *testContext) setNodeCondition(node string, typ v1.NodeConditionType, status v1.ConditionStatus, reason, message string) {
	tc.t.Helper()
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"reason":%q,"message":%q}]}}`, typ, status, reason, message)
	tc.kubectl("patch", "node", node, "--subresource=status", "--type=strategic", "-p", patch)
	got := nodeCondition(tc.getNode(node), typ)
	if got == nil || got.Status != status || got.Reason != reason {
		tc.t.Fatalf("after kubectl patch, node %s has condition %s = %+v, want status %s, reason %s", node, typ, got, status, reason)
	}
}

// getNode reads node from the API server.
func (tc *testContext) getNode(name string) *v1.Node {
	tc.t.Helper()
	node, err := adminClient.CoreV1().Nodes().Get(tc.ctx, name, metav1.GetOptions{})
	if err != nil {
		tc.t.Fatalf("reading node %s: %v", name, err)
	}
	return node
}

// nodeCondition returns node's condition of type typ, nil if it has none.
func nodeCondition(node *v1.Node, typ v1.NodeConditionType) *v1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == typ {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// pinned is makePod's pod, restricted to node by its hostname label.
func (tc *testContext) pinned(name, node string) *v1.Pod {
	pod := tc.makePod(name)
	pod.Spec.NodeSelector = map[string]string{v1.LabelHostname: node}
	return pod
}

// podNode returns the node the pod is bound to, "" while it is not.
func (tc *testContext) podNode(name string) string {
	tc.t.Helper()
	pod, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, name, metav1.GetOptions{})
	if err != nil {
		tc.t.Fatalf("reading pod %s: %v", name, err)
	}
	return pod.Spec.NodeName
}

// waitRejected waits for the pod's FailedScheduling event and returns its
// message; the test fails at once if the pod is bound instead.
func (tc *testContext) waitRejected(name string) string {
	tc.t.Helper()
	var msg, bound string
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		if bound = tc.podNode(name); bound != "" {
			return true, nil
		}
		events, err := adminClient.CoreV1().Events(tc.ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + name + ",reason=FailedScheduling",
		})
		if err != nil || len(events.Items) == 0 {
			return false, nil
		}
		msg = events.Items[0].Message
		return true, nil
	})
	switch {
	case bound != "":
		tc.t.Fatalf("pod %s was bound to %s, want it rejected", name, bound)
	case err != nil:
		tc.t.Fatalf("waiting for a FailedScheduling event of pod %s: %v", name, err)
	}
	return msg
}
