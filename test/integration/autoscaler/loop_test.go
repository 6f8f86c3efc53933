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

package autoscaler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// conditionTrue says whether obj's status has condition typ True.
func conditionTrue(obj *unstructured.Unstructured, typ string) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// placementPolicyConfig is a config of the default plugins plus
// PlacementPolicy with rules, under our scheduler name.
func placementPolicyConfig(rules ...v1config.PlacementRule) *configv1.KubeSchedulerConfiguration {
	return testconfig.New(cluster.KubeconfigPath, configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(0, "PlacementPolicy")},
		PluginConfig:  []configv1.PluginConfig{testconfig.Args("PlacementPolicy", &v1config.PlacementPolicyArgs{Rules: rules})},
	})
}

// TestResidencyStuckWithoutAffinity documents the failure mode of issue 21:
// a pod that only our scheduler's PlacementPolicy keeps in the EU carries
// no affinity, so Karpenter, which simulates scheduling from the pod's
// spec, adds a node of its preferred pool, in us-east-1; our scheduler
// rejects that node (the rule's message); and Karpenter never adds an EU
// node. Nor does it remove the US node, although it is empty and
// consolidatable after 5 s: each provisioning pass (every 10 s while the
// pod is pending) nominates it for the pod again, for 10 s
// (nominationWindow in Karpenter's pkg/controllers/state), and disruption
// skips nominated nodes. Not the add-and-remove loop one might expect: the
// pod stays pending next to an empty node, for as long as it is pending.
// The fix (required node affinity added at admission) makes this test fail.
func TestResidencyStuckWithoutAffinity(t *testing.T) {
	tc := newTestContext(t)
	for _, np := range usPreferred() {
		tc.createNodePool(np)
	}
	tc.startScheduler(placementPolicyConfig(v1config.PlacementRule{
		Name:       "eu-data-residency",
		Namespaces: []string{tc.ns},
		NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: v1.LabelTopologyRegion, Operator: metav1.LabelSelectorOpIn, Values: []string{"eu-west-1"}},
		}},
		Action: v1config.PlacementRequire,
	}))
	pod := tc.makePod("payments", "500m")
	tc.createPod(pod)

	// The scheduler saw the node Karpenter added, registered, and refused it.
	const rejection = `didn't match placement rule "eu-data-residency"`
	var message string
	tc.poll("our scheduler to reject the node Karpenter added", provisionTimeout, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(tc.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("the pod was bound, to %s: not the failure mode", p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled {
				message = c.Message
			}
		}
		return strings.Contains(message, rejection), nil
	})
	// Once the empty US node may be consolidated, two more looks of
	// Karpenter's disruption loop for empty nodes: two chances to remove
	// it, while its provisioning passes had as many to add an EU node.
	tc.poll("the NodeClaim to be consolidatable", provisionTimeout, func(ctx context.Context) (bool, error) {
		claims := tc.nodeClaims()
		return len(claims) == 1 && conditionTrue(&claims[0], "Consolidatable"), nil
	})
	evaluations, err := kp.Metric(tc.ctx, karpenter.EmptinessEvaluations)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tc.poll("two more looks of Karpenter for empty nodes", provisionTimeout, func(ctx context.Context) (bool, error) {
		n, err := kp.Metric(ctx, karpenter.EmptinessEvaluations)
		return n >= evaluations+2, err
	})
	t.Logf("the scheduler's message: %s; two looks for empty nodes later (%s):", message, time.Since(start).Round(100*time.Millisecond))

	type state struct {
		PodBound   bool
		Nodes      []string // region/pool
		NodeClaims int
		Disrupted  []string // DisruptionReason of the claims
		// EmptyCandidates Karpenter found at its last look.
		EmptyCandidates float64
		// NominatedEvent: Karpenter said (event DisruptionBlocked) that it
		// does not disrupt the node because it is nominated for a pod.
		NominatedEvent bool
	}
	p, err := client.CoreV1().Pods(tc.ns).Get(tc.ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := state{PodBound: p.Spec.NodeName != ""}
	for _, n := range tc.nodes() {
		t.Logf("node %s: %s", n.Name, karpenterLabels(n.Labels))
		events, err := client.CoreV1().Events(metav1.NamespaceAll).List(tc.ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + n.Name + ",reason=DisruptionBlocked",
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			t.Logf("event %s on node %s: %s", e.Reason, n.Name, e.Message)
			got.NominatedEvent = got.NominatedEvent || strings.Contains(e.Message, "nominated for a pending pod")
		}
		got.Nodes = append(got.Nodes, n.Labels[v1.LabelTopologyRegion]+"/"+n.Labels[karpenter.NodePoolLabel])
	}
	claims := tc.nodeClaims()
	got.NodeClaims = len(claims)
	for i := range claims {
		if r := disruptionReason(&claims[i]); r != "" {
			got.Disrupted = append(got.Disrupted, r)
		}
	}
	if got.EmptyCandidates, err = kp.Metric(tc.ctx, karpenter.EmptyCandidates); err != nil {
		t.Fatal(err)
	}
	want := state{Nodes: []string{"us-east-1/region-us-east-1"}, NodeClaims: 1, NominatedEvent: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the cluster after two provisioning passes (-want: the failure mode +got):\n%s", diff)
	}
}
