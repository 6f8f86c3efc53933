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

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

const maintenanceAnnotation = "scheduling.adminsched.io/maintenance-window"

// TestMaintenanceWindowWhileKarpenterReplacesTheNode: a node Karpenter made
// announces an open maintenance window, and its NodePool's template changes
// (as it does for a new image), so Karpenter is to replace it.
//
// Karpenter does not read the window. First, the failure without a taint:
// a new pod that MaintenanceWindow keeps off the node looks to Karpenter as
// if it fitted there, so Karpenter adds no node for it and nominates the
// node in its window for it instead, every provisioning pass; and a
// nominated node is never disrupted, so the drifted node is not replaced
// either. The pod would wait for the window's end, then land on the node
// about to be drained. Then the maintenancewindow-controller binary starts,
// reading the scheduler's config: it taints the node NoSchedule with its
// marker as the value and sets MaintenanceInProgress=True, and Karpenter,
// which reads taints, adds a node for the pod, replaces the drifted one and
// moves the Deployment's pod. No pod is bound to the node in its window at
// any time.
func TestMaintenanceWindowWhileKarpenterReplacesTheNode(t *testing.T) {
	tc := newTestContext(t)
	pool := karpenter.RegionNodePool("eu-west-1")
	pool.ConsolidationPolicy, pool.ConsolidateAfter = karpenter.WhenEmpty, 0 // never: only drift replaces
	tc.createNodePool(pool)
	cfg := testconfig.New(cluster.KubeconfigPath, configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(0, "MaintenanceWindow")},
	})
	tc.startScheduler(cfg)

	tc.createDeployment("service", "500m")
	var old string
	tc.poll("the Deployment's pod to run on a node Karpenter adds", provisionTimeout, func(ctx context.Context) (bool, error) {
		pods := tc.podsByName(ctx)
		for _, p := range pods {
			old = p.Spec.NodeName
		}
		return len(pods) == 1 && old != "", nil
	})
	window := fmt.Sprintf("%s/%s", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, maintenanceAnnotation, window)
	if _, err := client.CoreV1().Nodes().Patch(tc.ctx, old, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for name := range tc.podsByName(tc.ctx) {
		before[name] = true
	}
	// noneOnOld fails the wait if a pod created after the window was
	// announced is bound to the node in its window.
	noneOnOld := func(pods map[string]v1.Pod) error {
		for name, p := range pods {
			if p.Spec.NodeName == old && !before[name] {
				return fmt.Errorf("pod %s was bound to %s, the node in its maintenance window", name, old)
			}
		}
		return nil
	}

	tc.createPod(tc.makePod("batch", "500m"))
	drift := `{"spec":{"template":{"metadata":{"labels":{"adminsched.io/revision":"2"}}}}}`
	if _, err := kp.Client.Resource(karpenter.NodePoolGVR).Patch(tc.ctx, pool.Name, types.MergePatchType, []byte(drift), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var message string
	tc.poll("the drifted node to be nominated for the waiting pod, not replaced", provisionTimeout, func(ctx context.Context) (bool, error) {
		if err := noneOnOld(tc.podsByName(ctx)); err != nil {
			return false, err
		}
		claims := tc.nodeClaims()
		if len(claims) != 1 {
			return false, fmt.Errorf("%d NodeClaims: Karpenter added capacity for the waiting pod", len(claims))
		}
		if !conditionTrue(&claims[0], "Drifted") {
			return false, nil
		}
		events, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + old + ",reason=DisruptionBlocked",
		})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if strings.Contains(e.Message, "nominated for a pending pod") {
				message = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	p, err := client.CoreV1().Pods(tc.ns).Get(tc.ctx, "batch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			t.Logf("pod batch waits: %s; Karpenter on the drifted node: %s", c.Message, message)
		}
	}

	started := time.Now()
	ctrl := tc.startMaintenanceController(cfg)
	tc.poll("the controller to taint the node in its window and mark it MaintenanceInProgress", provisionTimeout, func(ctx context.Context) (bool, error) {
		if ctrl.Exited() {
			return false, fmt.Errorf("the controller exited: %s", ctrl.Output())
		}
		if err := noneOnOld(tc.podsByName(ctx)); err != nil {
			return false, err
		}
		n, err := client.CoreV1().Nodes().Get(ctx, old, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return hasControllerTaint(n) && nodeConditionTrue(n, conditionMaintenanceInProgress), nil
	})
	start := time.Now()
	t.Logf("controller started -> node tainted (%s=%s:NoSchedule) and %s=True: %s", maintenanceAnnotation, controllerTaintValue,
		conditionMaintenanceInProgress, start.Sub(started).Round(100*time.Millisecond))
	tc.poll("both pods to run on the replacement, and the old node to go", 2*provisionTimeout, func(ctx context.Context) (bool, error) {
		pods := tc.podsByName(ctx)
		if err := noneOnOld(pods); err != nil {
			return false, err
		}
		if _, err := client.CoreV1().Nodes().Get(ctx, old, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, nil
		}
		bound := 0
		for _, p := range pods {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				bound++
			}
		}
		return bound == 2, nil
	})
	t.Logf("node tainted by the controller -> old node gone, both pods bound elsewhere: %s", time.Since(start).Round(100*time.Millisecond))
	for _, n := range tc.nodes() {
		if n.Labels["adminsched.io/revision"] != "2" {
			t.Errorf("node %s is not of the pool's new template", n.Name)
		}
	}
}

// createDeployment creates a one-replica Deployment of makePod's pods
// asking for cpu, deleted before the test's cleanup empties the cluster
// (or its pods would come back and Karpenter add a node for them).
func (tc *testContext) createDeployment(name, cpu string) {
	tc.t.Helper()
	tc.createDeploymentOf(name, tc.makePod(name, cpu))
}

// createDeploymentOf is createDeployment of pods of pod's spec.
func (tc *testContext) createDeploymentOf(name string, pod *v1.Pod) {
	tc.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
	if _, err := client.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating Deployment %s: %v", name, err)
	}
	tc.t.Cleanup(func() {
		err := client.AppsV1().Deployments(tc.ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
		if err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting Deployment %s: %v", name, err)
		}
		_ = client.AppsV1().ReplicaSets(tc.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
}

// podsByName returns the test namespace's pods by name.
func (tc *testContext) podsByName(ctx context.Context) map[string]v1.Pod {
	tc.t.Helper()
	list, err := client.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing pods: %v", err)
	}
	out := map[string]v1.Pod{}
	for _, p := range list.Items {
		out[p.Name] = p
	}
	return out
}
