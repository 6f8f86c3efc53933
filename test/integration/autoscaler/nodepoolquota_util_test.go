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
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/controller"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// quotaClient is the NodePoolQuota client of the cluster's admin.
func quotaClient() *versioned.Clientset {
	return framework.NodePoolQuotaClient(cluster.Config)
}

// installNodePoolQuotaCRD installs manifests/crds, built by kustomize as a
// user applies it, until t ends.
func installNodePoolQuotaCRD(ctx context.Context, t *testing.T) {
	t.Helper()
	names := framework.InstallKustomizedCRDs(ctx, t, cluster.Config, "../../../manifests/crds")
	if want := "nodepoolquotas." + v1alpha1.GroupName; len(names) != 1 || names[0] != want {
		t.Fatalf("manifests/crds has the CRDs %v, want %s only", names, want)
	}
}

// createQuota creates q, deleted when the test ends; a quota of the same
// name that the previous phase deleted is gone at once (no finalizer).
func (tc *testContext) createQuota(q *v1alpha1.NodePoolQuota) {
	tc.t.Helper()
	quotas := quotaClient().SchedulingV1alpha1().NodePoolQuotas()
	if _, err := quotas.Create(tc.ctx, q, metav1.CreateOptions{}); err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(func() { _ = quotas.Delete(context.Background(), q.Name, metav1.DeleteOptions{}) })
}

// createTeamNamespace creates a namespace named prefix plus a random
// suffix. When the test ends its pods are deleted before the NodeClaims
// are (cleanups run last-in first-out, after newTestContext's was
// registered), or Karpenter would add nodes again for them.
func (tc *testContext) createTeamNamespace(prefix string) string {
	tc.t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(tc.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating a namespace %s...: %v", prefix, err)
	}
	tc.t.Cleanup(func() {
		ctx := context.Background()
		if err := client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
			tc.t.Errorf("deleting the pods of %s: %v", ns.Name, err)
		}
		if err := client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// waitNodePoolGone waits until the NodePool name, which the previous
// phase's cleanup deleted, can be created again.
func (tc *testContext) waitNodePoolGone(name string) {
	tc.t.Helper()
	tc.poll("NodePool "+name+" of the previous phase to go", provisionTimeout, func(ctx context.Context) (bool, error) {
		_, err := kp.Client.Resource(karpenter.NodePoolGVR).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// waitGatedAtAdmission waits until the API server applies the policy with
// the quota: a dry-run pod of ns comes back gated.
func (tc *testContext) waitGatedAtAdmission(ns string, pod *v1.Pod) {
	tc.t.Helper()
	pod = pod.DeepCopy()
	pod.Namespace = ns
	tc.poll("the admission policy to gate a pod of "+ns, 30*time.Second, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		return gated(got), nil
	})
}

// gated says whether pod carries the quota's scheduling gate.
func gated(pod *v1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g v1.PodSchedulingGate) bool { return g.Name == v1alpha1.SchedulingGate })
}

// podState is what the test counts of a group of pods.
type podState struct {
	Running, Gated, Pending int // Pending: neither bound nor gated
}

func (s podState) String() string {
	return fmt.Sprintf("%d running, %d gated, %d pending", s.Running, s.Gated, s.Pending)
}

// podStates counts the pods of ns whose names are in names.
func (tc *testContext) podStates(ctx context.Context, ns string, names []string) (podState, []v1.Pod) {
	tc.t.Helper()
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing the pods of %s: %v", ns, err)
	}
	var s podState
	var pods []v1.Pod
	for _, p := range list.Items {
		if !slices.Contains(names, p.Name) || p.DeletionTimestamp != nil {
			continue
		}
		pods = append(pods, p)
		switch {
		case p.Spec.NodeName != "" && p.Status.Phase == v1.PodRunning:
			s.Running++
		case gated(&p):
			s.Gated++
		case p.Spec.NodeName == "":
			s.Pending++
		}
	}
	return s, pods
}

// claimsByPool counts the cluster's NodeClaims by their NodePool.
func (tc *testContext) claimsByPool() map[string]int {
	tc.t.Helper()
	out := map[string]int{}
	for _, c := range tc.nodeClaims() {
		out[c.GetLabels()[karpenter.NodePoolLabel]]++
	}
	return out
}

// heldEvents counts the controller's NodePoolQuotaExceeded Events by pod.
func (tc *testContext) heldEvents(ctx context.Context, ns string) (map[string]int, string) {
	tc.t.Helper()
	events, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing the events of %s: %v", ns, err)
	}
	out, message := map[string]int{}, ""
	for _, e := range events.Items {
		if e.Reason == controller.EventHeld && e.InvolvedObject.Kind == "Pod" {
			out[e.InvolvedObject.Name]++
			message = e.Message
		}
	}
	return out, message
}
