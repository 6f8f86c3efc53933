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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const (
	schedulerName = "custom-scheduler"
	pollInterval  = 100 * time.Millisecond
	// provisionTimeout bounds a wait for Karpenter to add or remove a node:
	// it decides within seconds (short batching window), and removing an
	// empty node takes consolidateAfter, up to 10 s until its disruption
	// loop looks, and 15 s it waits to validate its decision.
	provisionTimeout = 2 * time.Minute
)

var nonDNS = regexp.MustCompile("[^a-z0-9-]+")

// testContext is one test's namespace and NodePools.
type testContext struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	pools []string
}

// newTestContext creates the test's namespace. When the test ends, its
// pods are deleted, then every NodeClaim, and the cleanup waits until no
// NodeClaim and no node is left, so the next test starts from an empty
// cluster; then the test's NodePools go (before, Karpenter would log an
// error for every NodeClaim whose pool is gone).
func newTestContext(t *testing.T) *testContext {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	name := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 40 {
		name = name[:40]
	}
	tc := &testContext{t: t, ctx: ctx, ns: name + "-" + rand.String(5)}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", tc.ns, err)
	}
	t.Cleanup(func() {
		defer cancel()
		tc.removeAll()
	})
	return tc
}

// removeAll deletes the test's pods and namespace, then every NodeClaim
// (Karpenter drains and deletes their nodes), waits until none is left,
// and deletes the test's NodePools.
func (tc *testContext) removeAll() {
	ctx := context.Background()
	if err := client.CoreV1().Pods(tc.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		tc.t.Errorf("deleting the pods of %s: %v", tc.ns, err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, tc.ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		tc.t.Errorf("deleting namespace %s: %v", tc.ns, err)
	}
	defer func() {
		for _, name := range tc.pools {
			err := kp.Client.Resource(karpenter.NodePoolGVR).Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				tc.t.Errorf("deleting NodePool %s: %v", name, err)
			}
		}
	}()
	if err := kp.Client.Resource(karpenter.NodeClaimGVR).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		tc.t.Errorf("deleting the NodeClaims: %v", err)
	}
	var left []string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, provisionTimeout, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		claims, err := kp.Client.Resource(karpenter.NodeClaimGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range claims.Items {
			left = append(left, "NodeClaim "+c.GetName())
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			left = append(left, "Node "+n.Name)
		}
		return len(left) == 0, nil
	})
	if err != nil {
		tc.t.Errorf("the cluster was not emptied for the next test (%v left): %v", left, err)
	}
}

// createNodePool creates np; it is deleted when the test ends, after its
// nodes.
func (tc *testContext) createNodePool(np karpenter.NodePool) {
	tc.t.Helper()
	if err := kp.CreateNodePool(tc.ctx, np); err != nil {
		tc.t.Fatal(err)
	}
	tc.pools = append(tc.pools, np.Name)
}

// makePod returns a pod for our scheduler requesting cpu and 256Mi.
func (tc *testContext) makePod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(cpu),
					v1.ResourceMemory: resource.MustParse("256Mi"),
				}},
			}},
		},
	}
}

// requireIn adds a required node affinity term key In values to pod.
func requireIn(pod *v1.Pod, key string, values ...string) *v1.Pod {
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}},
		}}},
	}}
	return pod
}

func (tc *testContext) createPod(pod *v1.Pod) {
	tc.t.Helper()
	if _, err := client.CoreV1().Pods(tc.ns).Create(tc.ctx, pod, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
}

// poll runs cond until it is done, failing the test after timeout or when
// Karpenter or a program of the cluster exited.
func (tc *testContext) poll(what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	tc.t.Helper()
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		if err := errors.Join(kp.Err(), cluster.Err()); err != nil {
			return false, err
		}
		return cond(ctx)
	})
	if err != nil {
		tc.t.Fatalf("waiting for %s: %v (Karpenter's log: %s)", what, err, kp.Log())
	}
}

// nodeClaims lists the NodeClaims of the cluster.
func (tc *testContext) nodeClaims() []unstructured.Unstructured {
	tc.t.Helper()
	list, err := kp.Client.Resource(karpenter.NodeClaimGVR).List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing NodeClaims: %v", err)
	}
	return list.Items
}

// nodes lists the nodes of the cluster.
func (tc *testContext) nodes() []v1.Node {
	tc.t.Helper()
	list, err := client.CoreV1().Nodes().List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing nodes: %v", err)
	}
	return list.Items
}

// defaultProfileConfig is a config of the default plugins under our
// scheduler name, for the cluster's kubeconfig.
func defaultProfileConfig() *configv1.KubeSchedulerConfiguration {
	return testconfig.New(cluster.KubeconfigPath, configv1.KubeSchedulerProfile{SchedulerName: ptr.To(schedulerName)})
}

// startScheduler runs our scheduler binary (SCHEDULER_BINARY, else
// bin/kube-scheduler, which make integration-test builds) with cfg until
// the test ends; its output is logged if the test failed.
func (tc *testContext) startScheduler(cfg *configv1.KubeSchedulerConfiguration) {
	tc.t.Helper()
	bin := os.Getenv("SCHEDULER_BINARY")
	if bin == "" {
		bin, _ = filepath.Abs("../../../bin/kube-scheduler")
	}
	if _, err := os.Stat(bin); err != nil {
		tc.t.Fatalf("these tests run the scheduler binary: build it with `make build` (or set SCHEDULER_BINARY): %v", err)
	}
	// No serving port: nothing here reads its metrics or health. The
	// scheduler stops before the cluster is emptied: cleanups run last-in
	// first-out, and newTestContext registered that one first.
	cmd := exec.Command(bin, "--config="+testconfig.Write(tc.t, cfg), "--secure-port=0", "--v=2")
	if _, err := framework.StartProcess(tc.t, "the scheduler", cmd); err != nil {
		tc.t.Fatalf("starting %s: %v", bin, err)
	}
}
