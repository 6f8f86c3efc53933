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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

const (
	// expiringAfter is the expireAfter of the expiring pool's nodes: short,
	// as the test waits for the expiry, and longer than the Job's deadline
	// and margin, so that the Job fits before it.
	expiringAfter = 3 * time.Minute
	// jobDeadline is the short Job's activeDeadlineSeconds.
	jobDeadline = 120
	// runtimeMargin is the args' runtimeMargin: the default 10m would not
	// let the Job end before a 3-minute expiry.
	runtimeMargin = 20 * time.Second
	// withoutKarpenter is the control profile: the same args, but without
	// the NodeClaims source.
	withoutKarpenter = "custom-scheduler-without-karpenter"
)

// TestNodeClaimExpiryLookAhead: a Karpenter node X whose NodeClaim expires
// in 3 minutes (its NodePool's expireAfter), under a profile that avoids
// windows opening within 5 minutes. An expiry is a window that opens then
// and does not end, so X receives no new long-running pod, while a short
// Job (activeDeadlineSeconds 120, which ends with the 20 s margin before the
// expiry) still uses it. The same Deployment under a profile whose args
// only differ by karpenter: false lands on X: without the NodeClaims
// source the test fails.
//
// Karpenter does not look ahead: to it the long-running pod fits on X, so it
// adds no node for it until X expires; then it deletes X and adds a node of
// the other pool (its nodes never expire; the expiring pool's CPU limit is
// spent), where the pod lands. The pod is never bound to X.
func TestNodeClaimExpiryLookAhead(t *testing.T) {
	tc := newTestContext(t)
	expiring := karpenter.RegionNodePool("eu-west-1")
	expiring.Name, expiring.Weight = "expiring", 100 // Karpenter tries it first
	expiring.ConsolidationPolicy, expiring.ConsolidateAfter = karpenter.WhenEmpty, 0
	tc.createExpiringNodePool(expiring, expiringAfter)
	steady := karpenter.RegionNodePool("eu-west-1")
	steady.ConsolidationPolicy, steady.ConsolidateAfter = karpenter.WhenEmpty, 0
	tc.createNodePool(steady)
	args := fmt.Sprintf(`"avoidWithin":"5m","runtimeMargin":%q`, runtimeMargin)
	tc.startScheduler(testconfig.New(cluster.KubeconfigPath,
		maintenanceProfile(schedulerName, "{"+args+"}"),
		maintenanceProfile(withoutKarpenter, "{"+args+`,"karpenter":false}`)))

	// X: Karpenter adds it for a first pod, placed by the control profile
	// (the other would keep it off X, whose expiry is within avoidWithin).
	first := tc.makePod("first", "250m")
	first.Spec.SchedulerName = withoutKarpenter
	tc.createPod(first)
	var x string
	tc.poll("the first pod to run on a node of the expiring pool", provisionTimeout, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(tc.ns).Get(ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		x = p.Spec.NodeName
		return x != "", nil
	})
	claim, expireAfter, expiry := tc.nodeClaimExpiry(x)
	t.Logf("node %s (NodeClaim %s, expireAfter %s) expires at %s, in %s", x, claim, expireAfter,
		expiry.UTC().Format(time.RFC3339), time.Until(expiry).Round(time.Second))
	n, err := client.CoreV1().Nodes().Get(tc.ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pool := n.Labels[karpenter.NodePoolLabel]; pool != expiring.Name {
		t.Fatalf("node %s is of NodePool %q, want %q", x, pool, expiring.Name)
	}
	// No other node of this pool: after X, Karpenter must use the steady one.
	tc.patchNodePool(expiring.Name, `{"spec":{"limits":{"cpu":"1"}}}`)

	// The long-running pod (no runtime) would fit on X, but X expires within
	// avoidWithin.
	tc.createDeployment("service", "500m")
	var message string
	tc.poll("the Deployment's pod to be rejected", provisionTimeout, func(ctx context.Context) (bool, error) {
		p, err := tc.podOf(ctx, "app=service")
		if p == nil || err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("the long-running pod was bound to %s, whose NodeClaim expires at %s", p.Spec.NodeName, expiry.UTC().Format(time.RFC3339))
		}
		message = unschedulableMessage(p)
		return message != "", nil
	})
	t.Logf("the long-running pod waits: %s", message)

	// The short Job ends, with the margin, before the expiry: it uses X.
	tc.createJob("short", "250m", jobDeadline)
	tc.waitBoundTo("the short Job's pod", "job-name=short", x)
	bound := time.Now()
	t.Logf("the Job's pod runs on %s; it ends (deadline and margin) %s before the expiry",
		x, expiry.Sub(bound.Add(jobDeadline*time.Second+runtimeMargin)).Round(time.Second))

	// Control: the same Deployment under the profile without the NodeClaims
	// source lands on X at once.
	control := tc.makePod("control", "500m")
	control.Spec.SchedulerName = withoutKarpenter
	tc.createDeploymentOf("control", control)
	tc.waitBoundTo("the control Deployment's pod", "app=control", x)
	tc.deleteDeployment("control")

	// Until X expires, the long-running pod waits; then Karpenter adds a
	// node of the steady pool for it.
	var y string
	tc.poll("the long-running pod to run on a new node after "+x+" expires", time.Until(expiry)+provisionTimeout, func(ctx context.Context) (bool, error) {
		if err := tc.notOn(ctx, "app=service", x); err != nil {
			return false, err
		}
		p, err := tc.podOf(ctx, "app=service")
		if p == nil || err != nil {
			return false, err
		}
		y = p.Spec.NodeName
		return y != "", nil
	})
	landed := time.Now()
	if landed.Before(expiry) {
		t.Logf("Karpenter added %s for the long-running pod %s before %s expired", y, expiry.Sub(landed).Round(time.Second), x)
	} else {
		t.Logf("the long-running pod runs on %s, %s after %s expired", y, landed.Sub(expiry).Round(100*time.Millisecond), x)
	}
	n, err = client.CoreV1().Nodes().Get(tc.ctx, y, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pool := n.Labels[karpenter.NodePoolLabel]; pool != steady.Name {
		t.Errorf("node %s is of NodePool %q, want %q", y, pool, steady.Name)
	}
}

// waitBoundTo waits until the pod that selector matches (what) is bound
// to node; it fails when that pod is bound to another node, or the
// long-running pod to node.
func (tc *testContext) waitBoundTo(what, selector, node string) {
	tc.t.Helper()
	tc.poll(what+" to run on "+node, provisionTimeout, func(ctx context.Context) (bool, error) {
		if err := tc.notOn(ctx, "app=service", node); err != nil {
			return false, err
		}
		p, err := tc.podOf(ctx, selector)
		if p == nil || err != nil || p.Spec.NodeName == "" {
			return false, err
		}
		if p.Spec.NodeName != node {
			return false, fmt.Errorf("%s was bound to %s, not %s", what, p.Spec.NodeName, node)
		}
		return true, nil
	})
}

// notOn fails when the pod that selector matches is bound to node.
func (tc *testContext) notOn(ctx context.Context, selector, node string) error {
	p, err := tc.podOf(ctx, selector)
	if err != nil || p == nil {
		return err
	}
	if p.Spec.NodeName == node {
		return fmt.Errorf("pod %s was bound to %s", p.Name, node)
	}
	return nil
}

// deleteDeployment deletes the Deployment name and waits until its pods
// are gone.
func (tc *testContext) deleteDeployment(name string) {
	tc.t.Helper()
	err := client.AppsV1().Deployments(tc.ns).Delete(tc.ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	if err != nil {
		tc.t.Fatalf("deleting Deployment %s: %v", name, err)
	}
	tc.poll("the pods of Deployment "+name+" to go", provisionTimeout, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		return err == nil && len(list.Items) == 0, err
	})
}
