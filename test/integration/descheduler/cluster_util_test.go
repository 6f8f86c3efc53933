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

package descheduler

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const (
	schedulerName = "custom-scheduler"
	pollInterval  = 100 * time.Millisecond
	waitTimeout   = time.Minute
	zoneLabel     = "topology.kubernetes.io/zone"
)

// testContext is one test's namespace and nodes, removed when it ends.
type testContext struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	nodes []string
}

// newTestContext creates the test's namespace. When the test ends (after
// its scheduler and descheduler stopped: cleanups run last-in first-out)
// its Deployments, pods, namespace and nodes are deleted.
func newTestContext(t *testing.T) *testContext {
	t.Helper()
	ctx, ns := framework.NewNamespace(t, client)
	tc := &testContext{t: t, ctx: ctx, ns: ns}
	t.Cleanup(tc.removeAll)
	return tc
}

// removeAll deletes the Deployments first, so that no controller replaces
// the pods, then the pods with no grace period, the namespace and nodes.
func (tc *testContext) removeAll() {
	ctx := context.Background()
	background := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	if err := client.AppsV1().Deployments(tc.ns).DeleteCollection(ctx, background, metav1.ListOptions{}); err != nil {
		tc.t.Errorf("deleting the Deployments of %s: %v", tc.ns, err)
	}
	if err := client.AppsV1().ReplicaSets(tc.ns).DeleteCollection(ctx, background, metav1.ListOptions{}); err != nil {
		tc.t.Errorf("deleting the ReplicaSets of %s: %v", tc.ns, err)
	}
	if err := client.CoreV1().Pods(tc.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		tc.t.Errorf("deleting the pods of %s: %v", tc.ns, err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, tc.ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		tc.t.Errorf("deleting namespace %s: %v", tc.ns, err)
	}
	for _, n := range tc.nodes {
		if err := client.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting node %s: %v", n, err)
		}
	}
}

// createNodes creates count Ready nodes named prefix-1... with 8 CPUs,
// 32Gi and room for pods pods, labelled with labels and their hostname;
// KWOK keeps them Ready. It returns their names.
func (tc *testContext) createNodes(prefix string, count, pods int, labels map[string]string) []string {
	tc.t.Helper()
	var names []string
	for i := 1; i <= count; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		res := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("8"),
			v1.ResourceMemory: resource.MustParse("32Gi"),
			v1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
			Status: v1.NodeStatus{
				Capacity: res, Allocatable: res.DeepCopy(),
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			},
		}
		maps.Copy(node.Labels, labels)
		// Created with its status: KWOK takes capacity from the node as it
		// first sees it.
		if _, err := client.CoreV1().Nodes().Create(tc.ctx, node, metav1.CreateOptions{}); err != nil {
			tc.t.Fatalf("creating node %s: %v", name, err)
		}
		tc.nodes = append(tc.nodes, name)
		names = append(names, name)
	}
	return names
}

// createDeployment creates a Deployment of replicas small pods for our
// scheduler, labelled app=name, and waits until all are bound.
func (tc *testContext) createDeployment(name string, replicas int) {
	tc.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					SchedulerName:                 schedulerName,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []v1.Container{{
						Name:  "app",
						Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
							v1.ResourceCPU:    resource.MustParse("100m"),
							v1.ResourceMemory: resource.MustParse("64Mi"),
						}},
					}},
				},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating Deployment %s: %v", name, err)
	}
	tc.waitSettled(replicas)
}

// waitSettled waits until the namespace holds want pods, all bound and
// none being deleted.
func (tc *testContext) waitSettled(want int) {
	tc.t.Helper()
	var got map[string]int
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var bound int
		var err error
		got, bound, err = tc.podsPerNode(ctx)
		return err == nil && bound == want && sum(got) == want, err
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d bound pods (pods per node %v): %v", want, got, err)
	}
}

// podsPerNode counts the namespace's live pods per node (unbound ones
// under ""), and how many are bound.
func (tc *testContext) podsPerNode(ctx context.Context) (map[string]int, int, error) {
	pods, err := client.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, 0, err
	}
	counts := map[string]int{}
	for _, n := range tc.nodes {
		counts[n] = 0
	}
	bound := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		counts[p.Spec.NodeName]++
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	return counts, bound, nil
}

// spreadOf is max-min of the bound pods over nodes.
func spreadOf(counts map[string]int, nodes []string) int {
	vals := make([]int, 0, len(nodes))
	for _, n := range nodes {
		vals = append(vals, counts[n])
	}
	return slices.Max(vals) - slices.Min(vals)
}

func sum(counts map[string]int) int {
	total := 0
	for _, c := range counts {
		total += c
	}
	return total
}

// binary returns the path in env, else bin/name; the test fails, naming
// the make target that builds it, when it is missing.
func binary(t *testing.T, env, name, target string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path, _ = filepath.Abs(filepath.Join("../../../bin", name))
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("this test runs %s: build it with `make %s` (or set %s): %v", name, target, env, err)
	}
	return path
}

// startScheduler writes cfg (with the cluster's kubeconfig and leader
// election off) and runs our scheduler binary with it until the test
// ends; it returns the config file's path, for PolicyEvictor.
func (tc *testContext) startScheduler(cfg *configv1.KubeSchedulerConfiguration) string {
	tc.t.Helper()
	bin := binary(tc.t, "SCHEDULER_BINARY", "kube-scheduler", "build")
	cfg.ClientConnection.Kubeconfig = cluster.KubeconfigPath
	cfg.LeaderElection.LeaderElect = ptr.To(false)
	path := testconfig.Write(tc.t, cfg)
	cmd := exec.Command(bin, "--config="+path, "--secure-port=0", "--v=2")
	if _, err := framework.StartProcess(tc.t, "the scheduler", cmd); err != nil {
		tc.t.Fatalf("starting %s: %v", bin, err)
	}
	return path
}

// shippedConfig reads a scheduler config of manifests/.
func shippedConfig(t *testing.T, path string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../../manifests", path))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testconfig.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}
