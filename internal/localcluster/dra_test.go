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

package localcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// seatResource is the extended resource the test's DeviceClass maps to its
// devices.
const seatResource = "licenses.example.com/matlab"

// podSeats is how the pods of the DRA test stand: which hold a node, which
// the scheduler reported unschedulable.
type podSeats struct {
	Running, Unschedulable []string
}

// TestDRAExtendedResourceSeats runs what a license driver relies on, on the
// whole embedded cluster with our scheduler: a DeviceClass with
// extendedResourceName and an allNodes ResourceSlice of 3 devices seat 3 of
// 5 pods asking for the resource in their limits; the other 2 wait with
// DynamicResources' reason. Deleting a running pod frees its device (the
// scheduler's claim for it is deallocated and removed by
// kube-controller-manager's resourceclaim-controller) and a waiting pod
// starts. Without that controller the seat stayed taken.
func TestDRAExtendedResourceSeats(t *testing.T) {
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		t.Skipf("%s", kubeversion.Unavailable(kubeversion.DRAExtendedResource).Error())
	}
	cp := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := kubernetes.NewForConfigOrDie(cp.Config)

	for i := 1; i <= 3; i++ {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("worker-%d", i)}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "matlab.licenses.example.com"},
		Spec: resourcev1.DeviceClassSpec{
			Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "licenses.example.com"`}}},
			ExtendedResourceName: ptr.To(seatResource),
		},
	}
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "matlab"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "licenses.example.com",
			Pool:     resourcev1.ResourcePool{Name: "matlab", ResourceSliceCount: 1},
			AllNodes: ptr.To(true),
			Devices:  []resourcev1.Device{{Name: "seat-0"}, {Name: "seat-1"}, {Name: "seat-2"}},
		},
	}
	if _, err := client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cfg := testconfig.New(cp.KubeconfigPath, configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(corev1.DefaultSchedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(3, config.NodeLessPodsName)},
	})
	sched, err := localscheduler.Setup(ctx, testconfig.Write(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sched.Stop)

	ns := "default"
	for i := range 5 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("solver-%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "solver", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{seatResource: resource.MustParse("1")}},
			}}},
		}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	seats := waitSeats(ctx, t, client, ns, 3, 2)
	t.Logf("3 running, 2 unschedulable after %v", time.Since(start).Round(100*time.Millisecond))
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !slices.Contains(seats.Unschedulable, p.Name) {
			continue
		}
		if msg := scheduledMessage(&p); !strings.Contains(msg, "cannot allocate all claims") {
			t.Errorf("pod %s waits with %q, want DynamicResources' \"cannot allocate all claims\"", p.Name, msg)
		}
	}

	gone := seats.Running[0]
	if err := client.CoreV1().Pods(ns).Delete(ctx, gone, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	after := waitSeats(ctx, t, client, ns, 3, 1)
	t.Logf("a waiting pod started %v after a running one was deleted", time.Since(start).Round(100*time.Millisecond))
	started := slices.DeleteFunc(slices.Clone(after.Running), func(n string) bool { return slices.Contains(seats.Running, n) })
	if len(started) != 1 || !slices.Contains(seats.Unschedulable, started[0]) {
		t.Errorf("running before %v, after deleting %s: %v; want one of the waiting %v to have started", seats.Running, gone, after.Running, seats.Unschedulable)
	}

	claims, err := client.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var allocated []string
	for _, c := range claims.Items {
		if c.Status.Allocation != nil && c.DeletionTimestamp == nil {
			allocated = append(allocated, c.Status.Allocation.Devices.Results[0].Device)
		}
	}
	slices.Sort(allocated)
	if diff := cmp.Diff([]string{"seat-0", "seat-1", "seat-2"}, allocated); diff != "" {
		t.Errorf("devices allocated to live claims (-want +got):\n%s", diff)
	}
	if err := cp.Err(); err != nil {
		t.Errorf("a program of the cluster exited (an unknown controller name, say): %v", err)
	}
}

// waitSeats waits until the pods of ns are running running (bound and
// Running) and unschedulable unschedulable, and returns them.
func waitSeats(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, running, unschedulable int) podSeats {
	t.Helper()
	var got podSeats
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got = podSeats{}
		for _, p := range pods.Items {
			switch {
			case p.DeletionTimestamp != nil:
			case p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning:
				got.Running = append(got.Running, p.Name)
			case p.Spec.NodeName == "" && strings.HasPrefix(scheduledMessage(&p), "0/"):
				got.Unschedulable = append(got.Unschedulable, p.Name)
			}
		}
		return len(got.Running) == running && len(got.Unschedulable) == unschedulable, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d running and %d unschedulable pods: %v (last: %+v)", running, unschedulable, err, got)
	}
	return got
}

// scheduledMessage is the message of pod's PodScheduled condition when it
// is False with reason Unschedulable, else "".
func scheduledMessage(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// TestCompleteAfterAnnotation: KWOK completes a Job's pod at once, or
// CompleteAfterAnnotation's duration after it started.
func TestCompleteAfterAnnotation(t *testing.T) {
	cp := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Jobs' pods on a node KWOK does not manage yet could stay Pending.
	if _, err := WaitNodesManaged(ctx, client, time.Minute, "worker"); err != nil {
		t.Fatal(err)
	}
	const hold = 8 * time.Second
	jobs := map[string]map[string]string{"at-once": nil, "held": {CompleteAfterAnnotation: hold.String()}}
	for name, annotations := range jobs {
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
				Spec: corev1.PodSpec{
					NodeName: "worker", RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
				},
			}},
		}
		if _, err := client.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ran := map[string]time.Duration{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded || p.Status.StartTime == nil || len(p.Status.ContainerStatuses) == 0 {
				continue
			}
			if term := p.Status.ContainerStatuses[0].State.Terminated; term != nil {
				ran[p.Labels["job-name"]] = term.FinishedAt.Sub(p.Status.StartTime.Time)
			}
		}
		return len(ran) == len(jobs), nil
	})
	if err != nil {
		t.Fatalf("waiting for both Jobs' pods to succeed: %v (succeeded: %v)", err, ran)
	}
	// KWOK's times are to the second.
	if d := ran["at-once"]; d > hold/2 {
		t.Errorf("a pod without the annotation ran %v, want it completed at once", d)
	}
	if d := ran["held"]; d < hold-time.Second {
		t.Errorf("a pod with %s: %v ran %v, want about %v", CompleteAfterAnnotation, hold, d, hold)
	}
}

// startCluster starts a cluster from the repository's binaries, stopped when
// the test ends.
func startCluster(t *testing.T) *ControlPlane {
	t.Helper()
	assets, err := AssetsFromEnv("../../bin")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Start(assets, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	return cp
}
