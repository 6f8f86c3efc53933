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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

const regionLabel = "topology.kubernetes.io/region"

// placementConfig returns a config whose profile enables PlacementPolicy
// (next to the defaults) with the given weight and rules.
func placementConfig(weight int32, rules ...v1config.PlacementRule) *configv1.KubeSchedulerConfiguration {
	return schedulerConfig(profile("PlacementPolicy", weight, &v1config.PlacementPolicyArgs{Rules: rules}))
}

// nodesWhere selects the nodes whose label key has one of values (operator
// In or NotIn).
func nodesWhere(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// labelled selects what carries the label key=value.
func labelled(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

// euResidency is a Require rule for the test's namespace.
func (tc *testContext) euResidency() v1config.PlacementRule {
	return v1config.PlacementRule{
		Name:         "eu-data-residency",
		Namespaces:   []string{tc.ns},
		NodeSelector: nodesWhere(regionLabel, metav1.LabelSelectorOpIn, "eu-west-1", "eu-central-1"),
		Action:       v1config.PlacementRequire,
	}
}

// failedSchedulingMessage waits for the pod's FailedScheduling event and
// returns its message.
func (tc *testContext) failedSchedulingMessage(name string) string {
	tc.t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		events, err := adminClient.CoreV1().Events(tc.ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + name + ",reason=FailedScheduling",
		})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			msg = e.Message
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for a FailedScheduling event of pod %s: %v", name, err)
	}
	return msg
}

// TestPlacementPolicyDataResidency checks that the pods a Require rule
// selects land only in the allowed regions, that two rules combine (EU and
// licensed), and that other pods go anywhere.
func TestPlacementPolicyDataResidency(t *testing.T) {
	tc := newTestContext(t)
	eu := []string{"pp-eu-1", "pp-eu-2"}
	tc.createNodes(
		makeNode(eu[0], withLabels(map[string]string{regionLabel: "eu-west-1"})),
		makeNode(eu[1], withLabels(map[string]string{regionLabel: "eu-central-1", "example.com/licensed": "oracle"})),
		makeNode("pp-us-1", withLabels(map[string]string{regionLabel: "us-east-1", "example.com/licensed": "oracle"})),
		makeNode("pp-us-2", withLabels(map[string]string{regionLabel: "us-east-1"})),
	)
	tc.startScheduler(placementConfig(1, tc.euResidency(), v1config.PlacementRule{
		Name:         "licensed-oracle",
		PodSelector:  labelled("license", "oracle"),
		NodeSelector: labelled("example.com/licensed", "oracle"),
		Action:       v1config.PlacementRequire,
	}))

	var resident, licensed []string
	for i := range 8 {
		resident = append(resident, tc.createPod(tc.makePod(fmt.Sprintf("resident-%d", i))).Name)
	}
	for i := range 3 {
		p := tc.makePod(fmt.Sprintf("licensed-%d", i))
		p.Labels["license"] = "oracle"
		licensed = append(licensed, tc.createPod(p).Name)
	}
	for pod, node := range tc.waitScheduled(resident...) {
		if node != eu[0] && node != eu[1] {
			t.Errorf("pod %s landed on %s, outside the EU nodes %v", pod, node, eu)
		}
	}
	for pod, node := range tc.waitScheduled(licensed...) {
		if node != eu[1] {
			t.Errorf("pod %s landed on %s, want %s, the only licensed EU node", pod, node, eu[1])
		}
	}

	// A pod of another namespace is not selected by the rule.
	other := tc.otherNamespace()
	free := tc.makePod("free")
	free.Namespace = other
	tc.createPod(free)
	tc.waitScheduledIn(other, "free")
	tc.deletePod(other, "free")
}

// TestPlacementPolicyPendingUntilRelabelled checks that a pod with no
// allowed node stays Pending with the rule named in its FailedScheduling
// event, and is scheduled once a node is relabelled into the region: the
// node label update's queueing hint requeues it, long before the
// unschedulable timeout (5 minutes).
func TestPlacementPolicyPendingUntilRelabelled(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(
		makeNode("pp-pending-us-1", withLabels(map[string]string{regionLabel: "us-east-1"})),
		makeNode("pp-pending-us-2", withLabels(map[string]string{regionLabel: "us-west-2"})),
	)
	tc.startScheduler(placementConfig(1, tc.euResidency()))
	tc.createPod(tc.makePod("resident"))

	msg := tc.failedSchedulingMessage("resident")
	want := `0/2 nodes are available: 2 node(s) didn't match placement rule "eu-data-residency"`
	if !strings.Contains(msg, want) {
		t.Errorf("FailedScheduling message %q does not contain %q", msg, want)
	}
	// Nothing else happens in the cluster: the pod stays pending.
	time.Sleep(2 * time.Second)
	if pod, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, "resident", metav1.GetOptions{}); err != nil || pod.Spec.NodeName != "" {
		t.Fatalf("pod before the relabel: node %q, err %v; want pending", pod.Spec.NodeName, err)
	}

	// Relabelling the other node (still outside the EU) must not help.
	patch := func(node, region string) {
		t.Helper()
		body := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, regionLabel, region)
		if _, err := adminClient.CoreV1().Nodes().Patch(tc.ctx, node, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatalf("labelling node %s: %v", node, err)
		}
	}
	patch("pp-pending-us-1", "us-east-2")
	start := time.Now()
	patch("pp-pending-us-2", "eu-west-1")
	placed := tc.waitScheduled("resident")
	if placed["resident"] != "pp-pending-us-2" {
		t.Errorf("pod landed on %s, want pp-pending-us-2 (relabelled into eu-west-1)", placed["resident"])
	}
	t.Logf("scheduled %v after the node was relabelled", time.Since(start).Round(100*time.Millisecond))
}

// TestPlacementPolicyNamespaceRelabelled checks the namespace label event:
// a rule with a namespaceSelector keeps a pod Pending until its namespace
// loses the label, and that update requeues the pod.
func TestPlacementPolicyNamespaceRelabelled(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(makeNode("pp-ns-us-1", withLabels(map[string]string{regionLabel: "us-east-1"})))
	label := func(value string) {
		t.Helper()
		body := `{"metadata":{"labels":{"data-residency":null}}}`
		if value != "" {
			body = fmt.Sprintf(`{"metadata":{"labels":{"data-residency":%q}}}`, value)
		}
		if _, err := adminClient.CoreV1().Namespaces().Patch(tc.ctx, tc.ns, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatalf("labelling namespace %s: %v", tc.ns, err)
		}
	}
	label("eu")
	tc.startScheduler(placementConfig(1, v1config.PlacementRule{
		Name:              "eu-by-namespace-label",
		NamespaceSelector: labelled("data-residency", "eu"),
		NodeSelector:      nodesWhere(regionLabel, metav1.LabelSelectorOpIn, "eu-west-1"),
		Action:            v1config.PlacementRequire,
	}))
	tc.createPod(tc.makePod("resident"))
	if msg := tc.failedSchedulingMessage("resident"); !strings.Contains(msg, `didn't match placement rule "eu-by-namespace-label"`) {
		t.Fatalf("FailedScheduling message %q does not name the rule", msg)
	}
	start := time.Now()
	label("")
	tc.waitScheduled("resident")
	t.Logf("scheduled %v after the namespace lost its label", time.Since(start).Round(100*time.Millisecond))
}
