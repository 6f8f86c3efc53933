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

package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestPodsOfDeletedNodeAreRemoved: as in a real cluster, where
// kube-controller-manager's pod garbage collector deletes the pods of a node
// that is gone, the embedded cluster removes both the pods that ran on a
// deleted node and the pods bound to it in flight, which no kubelet will
// ever start. Without that controller they stayed Running, then
// Terminating, for 20 minutes and more.
func TestPodsOfDeletedNodeAreRemoved(t *testing.T) {
	cp, client, _ := startCluster(t)
	t.Cleanup(func() { _ = cp.Stop() })
	ctx := context.Background()
	res := corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi"), "pods": resource.MustParse("110")}
	for _, name := range []string{"gone", "stays"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPod := func(name, node string) {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		createPod(fmt.Sprintf("ran-%d", i), "gone")
	}
	createPod("other", "stays")
	// Only delete the node once KWOK runs its pods, as a real node's would be.
	var phases []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		phases = nil
		for _, p := range list.Items {
			phases = append(phases, fmt.Sprintf("%s=%s", p.Name, p.Status.Phase))
		}
		slices.Sort(phases)
		return slices.Equal(phases, []string{"other=Running", "ran-0=Running", "ran-1=Running", "ran-2=Running"}), nil
	})
	if err != nil {
		t.Fatalf("KWOK did not start the pods: %v (pods: %v)", err, phases)
	}
	if err := client.CoreV1().Nodes().Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// Bound in flight: the scheduler's binding lands after the node is gone.
	createPod("in-flight-1", "gone")
	createPod("in-flight-2", "gone")

	var left []string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		left = nil
		for _, p := range list.Items {
			left = append(left, p.Name+"@"+p.Spec.NodeName)
		}
		slices.Sort(left)
		return slices.Equal(left, []string{"other@stays"}), nil
	})
	if err != nil {
		t.Fatalf("pods left 5 minutes after their node was deleted: %q, want only other@stays", left)
	}
	t.Logf("the deleted node's pods were gone %v after the node", time.Since(deleted).Round(time.Second))
}
