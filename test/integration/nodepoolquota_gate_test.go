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

package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/controller"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const gpuResource = v1.ResourceName("nvidia.com/gpu")

// TestNodePoolQuotaGate installs the CRD and the admission policy of
// manifests/nodepoolquota-controller, runs the controller in-process, and
// checks the gate end to end, with no scheduler (the test binds pods
// itself):
//   - a quota of 3 GPUs for team-a (the test's namespace) in a pool of 2
//     nodes; 6 pods of 1 GPU restricted to the pool are all gated at
//     creation; a pod of another namespace is not, unless team-b's
//     namespaceSelector (matchLabels and a NotIn) selects it;
//   - the controller lifts 3 gates, and keeps 3 with one
//     NodePoolQuotaExceeded Event each; the status says 3 held, AtLimit;
//   - bound, the 3 still leave no room; one deleted frees room for one;
//   - the limit raised to 5: the last 2 gates go within seconds.
func TestNodePoolQuotaGate(t *testing.T) {
	tc := newTestContext(t)
	npqInstallCRD(tc.ctx, t)
	framework.CreateMutatingAdmissionPolicies(tc.ctx, t, adminClient, "../../manifests/nodepoolquota-controller")
	quotas := framework.NodePoolQuotaClient(adminConfig).SchedulingV1alpha1().NodePoolQuotas()

	pool := "npq-" + rand.String(5)
	poolLabel := map[string]string{"pool": pool}
	q := &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: pool},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: poolLabel},
			Teams: []v1alpha1.TeamQuota{
				{Name: "team-a", Namespaces: []string{tc.ns}, Limits: v1.ResourceList{gpuResource: resource.MustParse("3")}},
				{Name: "team-b", Limits: v1.ResourceList{gpuResource: resource.MustParse("100")}, NamespaceSelector: &metav1.LabelSelector{
					MatchLabels:      map[string]string{"team": pool},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"free"}}},
				}},
			},
		},
	}
	if _, err := quotas.Create(tc.ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = quotas.Delete(context.Background(), pool, metav1.DeleteOptions{}) })
	withGPUs := func(n *v1.Node) {
		n.Status.Capacity[gpuResource], n.Status.Allocatable[gpuResource] = resource.MustParse("8"), resource.MustParse("8")
	}
	nodes := tc.createNodes(makeNode(pool+"-1", withHostnameLabel(), withLabels(poolLabel), withGPUs),
		makeNode(pool+"-2", withHostnameLabel(), withLabels(poolLabel), withGPUs))
	tc.waitGatedAtAdmission(poolLabel)

	// The policy's CEL follows a team's namespaceSelector.
	for _, ns := range []struct {
		labels map[string]string
		gated  bool
	}{
		{nil, false},
		{map[string]string{"team": pool}, true},
		{map[string]string{"team": pool, "tier": "paid"}, true},
		{map[string]string{"team": pool, "tier": "free"}, false},
		{map[string]string{"team": "other"}, false},
	} {
		name := tc.createNamespace(tc.ns+"-"+rand.String(4), ns.labels)
		pod := tc.createPod(gpuPod(name, "p", poolLabel))
		if got := len(pod.Spec.SchedulingGates) == 1; got != ns.gated {
			t.Errorf("a pod of a namespace labelled %v: gates %v, want gated %v", ns.labels, pod.Spec.SchedulingGates, ns.gated)
		}
	}

	var names []string
	for i := range 6 {
		pod := tc.createPod(gpuPod(tc.ns, fmt.Sprintf("gpu-%d", i), poolLabel))
		if !slices.ContainsFunc(pod.Spec.SchedulingGates, func(g v1.PodSchedulingGate) bool { return g.Name == v1alpha1.SchedulingGate }) {
			t.Fatalf("pod %s was created without the gate: %v", pod.Name, pod.Spec.SchedulingGates)
		}
		names = append(names, pod.Name)
		// Distinct creation times: the controller lifts the oldest first.
		time.Sleep(1100 * time.Millisecond)
	}

	started := time.Now()
	framework.RunNodePoolQuotaController(tc.ctx, t, adminConfig)
	ungated, at := tc.waitUngated(names, 3)
	t.Logf("3 of 6 gates lifted %v after the controller started", at.Sub(started).Round(10*time.Millisecond))
	if want := names[:3]; !slices.Equal(ungated, want) {
		t.Errorf("ungated %v, want the 3 oldest %v", ungated, want)
	}
	tc.waitHeldEvents(names[3:])
	st := tc.waitQuotaStatus(quotas, pool, "3 held", func(st *v1alpha1.NodePoolQuotaStatus) bool {
		return st.HeldPods == 3 && st.Nodes == 2 && meta.IsStatusConditionTrue(st.Conditions, controller.ConditionAtLimit)
	})
	t.Logf("status: %d nodes, %d held, AtLimit: %s", st.Nodes, st.HeldPods, meta.FindStatusCondition(st.Conditions, controller.ConditionAtLimit).Message)

	for i, name := range ungated {
		tc.bindPod(name, nodes[i%2])
	}
	tc.waitQuotaStatus(quotas, pool, "3 GPUs used", func(st *v1alpha1.NodePoolQuotaStatus) bool {
		u := st.Teams[0].Used[gpuResource]
		return u.Value() == 3
	})
	if got := tc.ungatedPods(names); len(got) != 3 {
		t.Errorf("with the 3 lifted pods bound: %d pods ungated, want still 3", len(got))
	}

	if err := adminClient.CoreV1().Pods(tc.ns).Delete(tc.ctx, names[0], metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	got, at := tc.waitUngated(names[1:], 3)
	if !slices.Equal(got, names[1:4]) {
		t.Errorf("after one bound pod went: ungated %v, want %v", got, names[1:4])
	}
	t.Logf("a bound pod deleted: the next gate lifted %v after", at.Sub(deleted).Round(10*time.Millisecond))

	cur, err := quotas.Get(tc.ctx, pool, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Teams[0].Limits[gpuResource] = resource.MustParse("5")
	if _, err := quotas.Update(tc.ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	raised := time.Now()
	_, at = tc.waitUngated(names[1:], 5)
	took := at.Sub(raised)
	t.Logf("limit raised to 5: the last 2 gates lifted %v after", took.Round(10*time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("the last 2 gates went %v after the limit was raised, want within 5 s", took)
	}
	tc.waitQuotaStatus(quotas, pool, "none held", func(st *v1alpha1.NodePoolQuotaStatus) bool {
		return st.HeldPods == 0 && meta.IsStatusConditionFalse(st.Conditions, controller.ConditionAtLimit) && st.ObservedGeneration == cur.Generation+1
	})
}

// gpuPod is a pod of ns asking for 1 GPU on the nodes with labels sel.
func gpuPod(ns, name string, sel map[string]string) *v1.Pod {
	one := v1.ResourceList{gpuResource: resource.MustParse("1")}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			NodeSelector:  sel,
			Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: one, Limits: one}}},
		},
	}
}

// waitGatedAtAdmission waits until the API server applies the policy with
// the test's quota: a dry-run pod of the test's namespace comes back gated.
func (tc *testContext) waitGatedAtAdmission(sel map[string]string) {
	tc.t.Helper()
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := adminClient.CoreV1().Pods(tc.ns).Create(ctx, gpuPod(tc.ns, "dry-run", sel), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		return len(pod.Spec.SchedulingGates) == 1 && pod.Spec.SchedulingGates[0].Name == v1alpha1.SchedulingGate, nil
	})
	if err != nil {
		tc.t.Fatalf("the admission policy did not gate a pod of team-a's namespace: %v", err)
	}
}

// ungatedPods are those of names (in the test's namespace) without the
// quota's gate, in the order of names.
func (tc *testContext) ungatedPods(names []string) []string {
	tc.t.Helper()
	var out []string
	for _, name := range names {
		pod, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			tc.t.Fatal(err)
		}
		if !slices.ContainsFunc(pod.Spec.SchedulingGates, func(g v1.PodSchedulingGate) bool { return g.Name == v1alpha1.SchedulingGate }) {
			out = append(out, name)
		}
	}
	return out
}

// waitUngated waits until n of names are ungated, then checks for a second
// that no more are, and returns them and when they were seen.
func (tc *testContext) waitUngated(names []string, n int) ([]string, time.Time) {
	tc.t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(tc.ctx, 50*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		got = tc.ungatedPods(names)
		return len(got) >= n, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d ungated pods: %v (ungated: %v)", n, err, got)
	}
	at := time.Now()
	time.Sleep(time.Second)
	if again := tc.ungatedPods(names); len(again) != n {
		tc.t.Errorf("%d pods ungated a second later, want %d: %v", len(again), n, again)
	}
	return got, at
}

// waitHeldEvents waits for one NodePoolQuotaExceeded Event on each of names.
func (tc *testContext) waitHeldEvents(names []string) {
	tc.t.Helper()
	var seen map[string]int
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		events, err := adminClient.CoreV1().Events(tc.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen = map[string]int{}
		for _, e := range events.Items {
			if e.Reason == controller.EventHeld {
				seen[e.InvolvedObject.Name] += int(max(e.Count, 1))
				if want := "team team-a uses 3 of 3 nvidia.com/gpu in pool "; !strings.Contains(e.Message, want) {
					tc.t.Errorf("event message %q, want one with %q", e.Message, want)
				}
			}
		}
		return len(seen) == len(names), nil
	})
	for _, name := range names {
		if seen[name] != 1 {
			tc.t.Errorf("pod %s has %d %s events, want 1 (%v)", name, seen[name], controller.EventHeld, err)
		}
	}
}

// bindPod binds the test's pod name to node, as a scheduler does.
func (tc *testContext) bindPod(name, node string) {
	tc.t.Helper()
	err := adminClient.CoreV1().Pods(tc.ns).Bind(tc.ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: name},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("binding pod %s to %s: %v", name, node, err)
	}
}

// waitQuotaStatus waits until the quota's status passes cond.
func (tc *testContext) waitQuotaStatus(quotas interface {
	Get(context.Context, string, metav1.GetOptions) (*v1alpha1.NodePoolQuota, error)
}, name, what string, cond func(*v1alpha1.NodePoolQuotaStatus) bool) *v1alpha1.NodePoolQuotaStatus {
	tc.t.Helper()
	var st *v1alpha1.NodePoolQuotaStatus
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		q, err := quotas.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st = &q.Status
		return cond(st), nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for the status of NodePoolQuota %s (%s): %v; status %+v", name, what, err, st)
	}
	return st
}
