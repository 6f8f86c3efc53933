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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// createExpiringNodePool creates np with its nodes expiring expireAfter
// after their NodeClaim's creation (karpenter.NodePool has no such field:
// its nodes never expire); it is deleted when the test ends, after its
// nodes.
func (tc *testContext) createExpiringNodePool(np karpenter.NodePool, expireAfter time.Duration) {
	tc.t.Helper()
	obj, err := np.Object()
	if err != nil {
		tc.t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, expireAfter.String(), "spec", "template", "spec", "expireAfter"); err != nil {
		tc.t.Fatal(err)
	}
	if _, err := kp.Client.Resource(karpenter.NodePoolGVR).Create(tc.ctx, obj, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating NodePool %s: %v", np.Name, err)
	}
	tc.pools = append(tc.pools, np.Name)
}

// patchNodePool merge-patches the NodePool name.
func (tc *testContext) patchNodePool(name, patch string) {
	tc.t.Helper()
	if _, err := kp.Client.Resource(karpenter.NodePoolGVR).Patch(tc.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		tc.t.Fatalf("patching NodePool %s: %v", name, err)
	}
}

// nodeClaimExpiry waits for the NodeClaim of node (by status.nodeName,
// which Karpenter sets once the node registered, and which MaintenanceWindow
// reads) and returns its name, its expireAfter as written, and when it
// expires (its creation plus that).
func (tc *testContext) nodeClaimExpiry(node string) (claim, expireAfter string, at time.Time) {
	tc.t.Helper()
	tc.poll("the NodeClaim of node "+node, provisionTimeout, func(ctx context.Context) (bool, error) {
		for _, c := range tc.nodeClaims() {
			if name, _, _ := unstructured.NestedString(c.Object, "status", "nodeName"); name != node {
				continue
			}
			expireAfter, _, _ = unstructured.NestedString(c.Object, "spec", "expireAfter")
			d, err := time.ParseDuration(expireAfter)
			if err != nil {
				return false, fmt.Errorf("NodeClaim %s of node %s: expireAfter %q: %w", c.GetName(), node, expireAfter, err)
			}
			claim, at = c.GetName(), c.GetCreationTimestamp().Add(d)
			return true, nil
		}
		return false, nil
	})
	return claim, expireAfter, at
}

// maintenanceProfile is a profile of the default plugins plus
// MaintenanceWindow with the JSON args under schedulerName.
func maintenanceProfile(schedulerName, args string) configv1.KubeSchedulerProfile {
	return configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(0, "MaintenanceWindow")},
		PluginConfig:  []configv1.PluginConfig{testconfig.RawArgs("MaintenanceWindow", args)},
	}
}

// createJob creates a Job of one makePod pod asking for cpu, whose pod
// template sets activeDeadlineSeconds (the pod's expected runtime for
// MaintenanceWindow). It is not retried, and is deleted before the test's
// cleanup empties the cluster.
func (tc *testContext) createJob(name, cpu string, deadline int64) {
	tc.t.Helper()
	pod := tc.makePod(name, cpu)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.ActiveDeadlineSeconds = ptr.To(deadline)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     v1.PodTemplateSpec{Spec: pod.Spec},
		},
	}
	if _, err := client.BatchV1().Jobs(tc.ns).Create(tc.ctx, job, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating Job %s: %v", name, err)
	}
	tc.t.Cleanup(func() {
		err := client.BatchV1().Jobs(tc.ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
		if err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting Job %s: %v", name, err)
		}
	})
}

// podOf returns the one live pod of the test's namespace whose labels
// match selector, nil while there is none.
func (tc *testContext) podOf(ctx context.Context, selector string) (*v1.Pod, error) {
	list, err := client.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var live []v1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	switch len(live) {
	case 0:
		return nil, nil
	case 1:
		return &live[0], nil
	}
	return nil, fmt.Errorf("%d pods match %s, want one", len(live), selector)
}

// unschedulableMessage is the message of pod's PodScheduled=False
// condition, empty while the scheduler has not rejected it.
func unschedulableMessage(pod *v1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}
