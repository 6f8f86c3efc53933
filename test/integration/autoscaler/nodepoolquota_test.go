//go:build !kube1.35

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

// The gate is a MutatingAdmissionPolicy of admissionregistration.k8s.io/v1,
// which 1.35's API lacks (there it is v1beta1 and off).

package autoscaler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// The burst of TestNodePoolQuotaKarpenter. Our instance types carry no
// extended resource (internal/localcluster/karpenter gives KWOK cpu,
// memory and pods only), so cpu stands for the GPUs: team-a may use 3
// cpus in pool gpu, two of its 1.5-cpu pods. The pools launch c-2x nodes
// only (2 cpus), so each such pod needs a node of its own and a count of
// NodeClaims is a count of the pods Karpenter provisioned for.
const (
	quotaPodCPU     = "1500m"
	teamALimit      = "3"
	teamAAllowed    = 2
	teamAGPUPods    = 8
	teamAGeneral    = 2
	teamBGPUPods    = 2
	quotaSettle     = 30 * time.Second // the window in which no NodeClaim may be added
	controlSettle   = 15 * time.Second
	releaseDeadline = 10 * time.Second
	released        = 2 // running team-a pods deleted to free the quota
)

// burstFigures are what one run of the burst measured.
type burstFigures struct {
	claims         map[string]int // NodeClaims by NodePool at the end of the settle window
	allowedRunning time.Duration  // burst created -> the allowed pods running
	teamA          podState       // team-a's gpu pods after the settle window
}

// TestNodePoolQuotaKarpenter: autoscalers must not add nodes for a pod the
// quota blocks. Team-a creates 8 pods bound to pool gpu where its quota
// fits 2, team-b 2 there (room), team-a 2 in pool general; the real
// Karpenter watches.
//
// Without the gate (the quota and the scheduler's plugin only, the
// control), every pod is Pending and Unschedulable at first: Karpenter,
// which does not know the plugin, launches a node for each, and the
// plugin then keeps 6 of team-a's pods off them: 6 nodes for nothing.
//
// With the gate (the admission policy of manifests/nodepoolquota-controller
// and the controller in-process), the 6 pods stay SchedulingGated with the
// controller's Event, Karpenter launches only the nodes of the allowed
// pods and adds none in a 30 s window after they run; 2 running team-a
// pods deleted, 2 gated ones start within seconds on the freed nodes.
func TestNodePoolQuotaKarpenter(t *testing.T) {
	installNodePoolQuotaCRD(context.Background(), t)
	var without, with burstFigures
	// The control first: the policy of the gated run, once deleted, may
	// still gate pods for a moment.
	if !t.Run("without the gate", func(t *testing.T) { without = quotaBurst(t, false) }) {
		t.FailNow()
	}
	if !t.Run("with the gate", func(t *testing.T) { with = quotaBurst(t, true) }) {
		t.FailNow()
	}
	t.Logf("NodeClaims in pool gpu: %d without the gate, %d with it (general: %d, %d); team-a gpu pods: %v without, %v with; allowed pods running after %s, %s",
		without.claims["gpu"], with.claims["gpu"], without.claims["general"], with.claims["general"],
		without.teamA, with.teamA, without.allowedRunning.Round(100*time.Millisecond), with.allowedRunning.Round(100*time.Millisecond))
	if without.claims["gpu"] <= with.claims["gpu"] {
		t.Errorf("pool gpu: %d NodeClaims without the gate, %d with it: the control does not show what the gate prevents",
			without.claims["gpu"], with.claims["gpu"])
	}
}

// quotaBurst runs the burst on an empty cluster, with the gate or without.
func quotaBurst(t *testing.T, gate bool) burstFigures {
	tc := newTestContext(t)
	for _, name := range []string{"gpu", "general"} {
		tc.waitNodePoolGone(name)
		tc.createNodePool(quotaNodePool(name))
	}
	teamA, teamB := tc.createTeamNamespace("team-a-"), tc.createTeamNamespace("team-b-")
	tc.createQuota(&v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "gpu"}},
			Teams: []v1alpha1.TeamQuota{
				{Name: "team-a", Namespaces: []string{teamA}, Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse(teamALimit)}},
				{Name: "team-b", Namespaces: []string{teamB}, Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100")}},
			},
		},
	})
	if gate {
		framework.CreateMutatingAdmissionPolicies(tc.ctx, t, client, "../../../manifests/nodepoolquota-controller")
		tc.waitGatedAtAdmission(teamA, tc.quotaPod("dry-run", "gpu"))
		framework.RunNodePoolQuotaController(tc.ctx, t, cluster.Config)
	}
	tc.startScheduler(testconfig.New(cluster.KubeconfigPath, configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(0, "NodePoolQuota")},
	}))

	aGPU := tc.createQuotaPods(teamA, "gpu", teamAGPUPods)
	aGeneral := tc.createQuotaPods(teamA, "general", teamAGeneral)
	bGPU := tc.createQuotaPods(teamB, "gpu", teamBGPUPods)
	start := time.Now()
	var a, ag, b podState
	tc.poll("the allowed pods to run", provisionTimeout, func(ctx context.Context) (bool, error) {
		a, _ = tc.podStates(ctx, teamA, aGPU)
		ag, _ = tc.podStates(ctx, teamA, aGeneral)
		b, _ = tc.podStates(ctx, teamB, bGPU)
		return a.Running >= teamAAllowed && ag.Running == teamAGeneral && b.Running == teamBGPUPods, nil
	})
	figures := burstFigures{allowedRunning: time.Since(start)}
	t.Logf("burst created -> allowed pods running: %s (team-a gpu: %v; team-a general: %v; team-b gpu: %v); NodeClaims %v",
		figures.allowedRunning.Round(100*time.Millisecond), a, ag, b, tc.claimsByPool())

	// The settle window: Karpenter has seen every pod that is not gated
	// for several of its batching windows by its end.
	settle := controlSettle
	if gate {
		settle = quotaSettle
	}
	peak := map[string]int{}
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) {
		for pool, n := range tc.claimsByPool() {
			peak[pool] = max(peak[pool], n)
		}
		a, _ = tc.podStates(tc.ctx, teamA, aGPU)
		if a.Running > teamAAllowed {
			t.Fatalf("team-a gpu pods: %v, the quota fits %d", a, teamAAllowed)
		}
		if err := kp.Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	figures.claims, figures.teamA = tc.claimsByPool(), a
	t.Logf("after a %s settle window: NodeClaims %v (peak %v), team-a gpu pods: %v", settle, figures.claims, peak, a)

	// One node per running pod: the pools launch nodes that hold one.
	allowedGPU, allowedGeneral := teamAAllowed+teamBGPUPods, teamAGeneral
	if peak["general"] != allowedGeneral {
		t.Errorf("pool general: %d NodeClaims at the peak, want %d, one per team-a pod there", peak["general"], allowedGeneral)
	}
	if !gate {
		// Karpenter does not know the plugin: the Pending surplus looks
		// like pods that need nodes.
		surplus := teamAGPUPods - teamAAllowed
		if peak["gpu"] <= allowedGPU {
			t.Errorf("without the gate, pool gpu: %d NodeClaims at the peak, want more than the %d the allowed pods need: Karpenter no longer provisions for the %d Pending surplus pods, so the control shows nothing",
				peak["gpu"], allowedGPU, surplus)
		}
		if a.Running != teamAAllowed || a.Pending != surplus {
			t.Errorf("without the gate, team-a gpu pods: %v, want %d running and %d pending (the plugin holds them)", a, teamAAllowed, surplus)
		}
		_, pods := tc.podStates(tc.ctx, teamA, aGPU)
		for _, p := range pods {
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
					if !strings.Contains(c.Message, "team team-a uses") {
						t.Errorf("pod %s is unschedulable for something else than the quota: %s", p.Name, c.Message)
					}
					break
				}
			}
		}
		return figures
	}

	if peak["gpu"] != allowedGPU {
		t.Errorf("with the gate, pool gpu: %d NodeClaims at the peak, want %d: one per allowed pod (team-a %d, team-b %d), none for the %d gated",
			peak["gpu"], allowedGPU, teamAAllowed, teamBGPUPods, teamAGPUPods-teamAAllowed)
	}
	if want := (podState{Running: teamAAllowed, Gated: teamAGPUPods - teamAAllowed}); a != want {
		t.Errorf("with the gate, team-a gpu pods: %v, want %v", a, want)
	}
	tc.checkHeld(teamA, aGPU)

	// Release: 2 running team-a pods go; 2 gated ones take their room and
	// the nodes they leave, without a new node.
	_, pods := tc.podStates(tc.ctx, teamA, aGPU)
	var deleted []string
	for _, p := range pods {
		if p.Spec.NodeName != "" && len(deleted) < released {
			deleted = append(deleted, p.Name)
		}
	}
	var left []string
	for _, name := range aGPU {
		if !slices.Contains(deleted, name) {
			left = append(left, name)
		}
	}
	freed := time.Now()
	for _, name := range deleted {
		if err := client.CoreV1().Pods(teamA).Delete(tc.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	var ungatedAt time.Duration
	// Bounded well below provisionTimeout: the pods need no new node.
	tc.poll(fmt.Sprintf("%d gated pods to start after %d running ones were deleted", released, released), 3*releaseDeadline, func(ctx context.Context) (bool, error) {
		a, _ = tc.podStates(ctx, teamA, left)
		if ungatedAt == 0 && a.Gated <= teamAGPUPods-teamAAllowed-released {
			ungatedAt = time.Since(freed)
		}
		return a.Running == teamAAllowed, nil
	})
	startedAt := time.Since(freed)
	t.Logf("%d running team-a pods deleted -> %d gates lifted %s, the pods running %s; team-a gpu pods: %v; NodeClaims %v",
		released, released, ungatedAt.Round(10*time.Millisecond), startedAt.Round(10*time.Millisecond), a, tc.claimsByPool())
	if startedAt > releaseDeadline {
		t.Errorf("the released pods ran %s after room was freed, want within %s", startedAt, releaseDeadline)
	}
	if want := (podState{Running: teamAAllowed, Gated: teamAGPUPods - teamAAllowed - released}); a != want {
		t.Errorf("after the release, team-a gpu pods: %v, want %v", a, want)
	}
	if got := tc.claimsByPool()["gpu"]; got != allowedGPU {
		t.Errorf("after the release, pool gpu: %d NodeClaims, want still %d (the started pods take the freed nodes)", got, allowedGPU)
	}
	return figures
}

// quotaNodePool is a pool of c-2x nodes labelled pool=name, in us-east-1,
// whose nodes stay until the test removes them, so that a count of
// NodeClaims is what Karpenter launched.
func quotaNodePool(name string) karpenter.NodePool {
	np := karpenter.RegionNodePool("us-east-1")
	np.Name = name
	np.Labels = map[string]string{"pool": name}
	np.Requirements = append(np.Requirements, v1.NodeSelectorRequirement{
		Key: v1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{"c-2x"},
	})
	np.ConsolidationPolicy, np.ConsolidateAfter = karpenter.WhenEmpty, 0
	return np
}

// quotaPod is a pod of quotaPodCPU on the nodes of pool.
func (tc *testContext) quotaPod(name, pool string) *v1.Pod {
	pod := tc.makePod(name, quotaPodCPU)
	pod.Spec.NodeSelector = map[string]string{"pool": pool}
	return pod
}

// createQuotaPods creates n quotaPods of ns on pool and returns their names.
func (tc *testContext) createQuotaPods(ns, pool string, n int) []string {
	tc.t.Helper()
	var names []string
	for i := range n {
		pod := tc.quotaPod(fmt.Sprintf("%s-%d", pool, i), pool)
		pod.Namespace = ns
		if _, err := client.CoreV1().Pods(ns).Create(tc.ctx, pod, metav1.CreateOptions{}); err != nil {
			tc.t.Fatalf("creating pod %s/%s: %v", ns, pod.Name, err)
		}
		names = append(names, pod.Name)
	}
	return names
}

// checkHeld checks that each gated pod of names has the controller's
// Event and the scheduler's PodScheduled=False SchedulingGated condition.
func (tc *testContext) checkHeld(ns string, names []string) {
	tc.t.Helper()
	events, message := tc.heldEvents(tc.ctx, ns)
	_, pods := tc.podStates(tc.ctx, ns, names)
	for _, p := range pods {
		if !gated(&p) {
			continue
		}
		if events[p.Name] == 0 {
			tc.t.Errorf("gated pod %s has no NodePoolQuotaExceeded Event", p.Name)
		}
		reason := ""
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				reason = c.Reason
			}
		}
		if reason != v1.PodReasonSchedulingGated {
			tc.t.Errorf("gated pod %s: PodScheduled reason %q, want %s", p.Name, reason, v1.PodReasonSchedulingGated)
		}
	}
	tc.t.Logf("the controller's Event on a held pod: %s", message)
}
