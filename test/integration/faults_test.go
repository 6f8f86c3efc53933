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

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
)

// failOnce is a test-only PreBind plugin: the first PreBind of every pod
// labeled fail-once fails, so the scheduler unreserves it and retries.
type failOnce struct {
	mu     sync.Mutex
	failed map[string]string // pod name -> node it failed on
}

const failOnceName = "FailOncePreBind"

func (f *failOnce) Name() string { return failOnceName }

func (f *failOnce) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return nil, nil
}

func (f *failOnce) PreBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if pod.Labels["fail-once"] != "true" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, done := f.failed[pod.Name]; done {
		return nil
	}
	f.failed[pod.Name] = nodeName
	return fwk.NewStatus(fwk.Error, "injected PreBind failure")
}

// pluginCapture replaces the registered NodeLessPods factory with one that
// keeps the plugin, so the test can read its counts.
type pluginCapture struct {
	mu sync.Mutex
	pl *nodelesspods.NodeLessPods
}

func (c *pluginCapture) option() app.Option {
	return func(r frameworkruntime.Registry) error {
		r[nodelesspods.Name] = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := nodelesspods.New(ctx, obj, h)
			if err == nil {
				c.mu.Lock()
				c.pl = p.(*nodelesspods.NodeLessPods)
				c.mu.Unlock()
			}
			return p, err
		}
		return nil
	}
}

// waitCountsMatch waits until the plugin's count for every node equals the
// pods bound there, as the API server says.
func (tc *testContext) waitCountsMatch(c *pluginCapture, nodes []string) {
	tc.t.Helper()
	var want map[string]int
	got := map[string]int{}
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		want = tc.podsPerNode(nodes, nil)
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range nodes {
			got[n] = c.pl.CountedPods(n)
		}
		return fmt.Sprint(got) == fmt.Sprint(want), nil
	})
	if err != nil {
		tc.t.Fatalf("plugin counts %v, want the bound pods %v", got, want)
	}
}

// TestFailedBindingLeavesCountsTrue makes the first binding attempt of every
// pod fail after Reserve. While the pod waits out its backoff, Unreserve must
// have taken it off its node's count; then the pod must be scheduled on the
// next attempt, and the counts must match the bound pods.
func TestFailedBindingLeavesCountsTrue(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(nodeSpec{name: "fail-a"}, nodeSpec{name: "fail-b"}, nodeSpec{name: "fail-c"})
	injector := &failOnce{failed: map[string]string{}}
	capture := &pluginCapture{}
	// A long first backoff leaves time to look at the counts between the
	// failure and the retry.
	config := strings.Replace(schedulerConfig(adminKubeconfig, 3, "", failOnceName),
		"kind: KubeSchedulerConfiguration\n", "kind: KubeSchedulerConfiguration\npodInitialBackoffSeconds: 3\n", 1)
	tc.startScheduler(config, capture.option(), app.WithPlugin(failOnceName, func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return injector, nil
	}))

	first := tc.makePod("flaky-0")
	first.Labels["fail-once"] = "true"
	tc.createPod(first)
	var failedOn string
	if err := wait.PollUntilContextTimeout(tc.ctx, 10*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		injector.mu.Lock()
		defer injector.mu.Unlock()
		failedOn = injector.failed[first.Name]
		return failedOn != "", nil
	}); err != nil {
		t.Fatalf("the injected PreBind failure never happened: %v", err)
	}
	if err := wait.PollUntilContextTimeout(tc.ctx, 10*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pod, err := adminClient.CoreV1().Pods(tc.ns).Get(ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.Spec.NodeName != "" {
			return false, fmt.Errorf("the pod was bound before its failed reservation on %s was seen undone", failedOn)
		}
		capture.mu.Lock()
		defer capture.mu.Unlock()
		return capture.pl.CountedPods(failedOn) == 0, nil
	}); err != nil {
		t.Fatalf("after the failed binding, %s still counts the pod: %v", failedOn, err)
	}
	tc.waitScheduled(first.Name)

	names := []string{first.Name}
	for i := 1; i < 6; i++ {
		pod := tc.makePod(fmt.Sprintf("flaky-%d", i))
		pod.Labels["fail-once"] = "true"
		tc.createPod(pod)
		names = append(names, pod.Name)
	}
	tc.waitScheduled(names...)
	injector.mu.Lock()
	failures := len(injector.failed)
	injector.mu.Unlock()
	if failures != len(names) {
		t.Fatalf("%d injected failures, want one per pod (%d)", failures, len(names))
	}
	// No spread check here: a pod whose binding failed keeps the node it was
	// nominated to, and its retry goes straight there without scoring (the
	// scheduler's nominated-node fast path), so failed pods may pile up on the
	// node that was emptiest while their reservations were undone.
	tc.waitCountsMatch(capture, nodes)
}

// TestNodeDeletedWhilePodsPending deletes a node that holds pods while new
// pods wait behind a scheduling gate: once released, they spread over the
// remaining nodes, and the deleted node counts nothing.
func TestNodeDeletedWhilePodsPending(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(nodeSpec{name: "gone-a"}, nodeSpec{name: "gone-b"}, nodeSpec{name: "gone-c"})
	capture := &pluginCapture{}
	tc.startScheduler(schedulerConfig(adminKubeconfig, 3, ""), capture.option())
	tc.createBoundPods(boundPod{node: "gone-a"}, boundPod{node: "gone-b"}, boundPod{node: "gone-b"})

	var pending []string
	for i := range 5 {
		pod := tc.makePod(fmt.Sprintf("gated-%d", i))
		pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/hold"}}
		tc.createPod(pod)
		pending = append(pending, pod.Name)
	}
	if err := adminClient.CoreV1().Nodes().Delete(tc.ctx, "gone-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		capture.mu.Lock()
		defer capture.mu.Unlock()
		return capture.pl.CountedPods("gone-a") == 0, nil
	}); err != nil {
		t.Fatalf("the deleted node still counts %d pods", capture.pl.CountedPods("gone-a"))
	}
	for _, name := range pending {
		pod, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Spec.SchedulingGates = nil
		if _, err := adminClient.CoreV1().Pods(tc.ns).Update(tc.ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	placed := tc.waitScheduled(pending...)
	for name, node := range placed {
		if node == "gone-a" {
			t.Errorf("pod %s was bound to the deleted node", name)
		}
	}
	remaining := tc.podsPerNode(nodes[1:], func(p *v1.Pod) bool { return p.Spec.NodeName != "gone-a" })
	// gone-b holds 2 pods and gone-c none: 5 new pods even them out to 4 and 3.
	if s := spread(remaining); s > 1 {
		t.Errorf("pods per remaining node %v: spread %d, want at most 1", remaining, s)
	}
}

// TestSchedulerRestartRebuildsCounts stops the scheduler mid-workload and
// starts a new one: it must rebuild its counts from the API server and keep
// the balance.
func TestSchedulerRestartRebuildsCounts(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(nodeSpec{name: "restart-a"}, nodeSpec{name: "restart-b"}, nodeSpec{name: "restart-c"})
	first := tc.startScheduler(schedulerConfig(adminKubeconfig, 3, ""))
	var names []string
	for i := range 4 {
		names = append(names, tc.createPod(tc.makePod(fmt.Sprintf("before-%d", i))).Name)
	}
	tc.waitScheduled(names...)
	first.Stop()

	capture := &pluginCapture{}
	tc.startScheduler(schedulerConfig(adminKubeconfig, 3, ""), capture.option())
	tc.waitCountsMatch(capture, nodes)
	names = nil
	for i := range 5 {
		names = append(names, tc.createPod(tc.makePod(fmt.Sprintf("after-%d", i))).Name)
	}
	tc.waitScheduled(names...)
	counts := tc.podsPerNode(nodes, nil)
	if s := spread(counts); s != 0 {
		t.Errorf("pods per node %v after 9 pods on 3 nodes: spread %d, want 0", counts, s)
	}
}

// TestDeletedPodsAreReplaced deletes the pods of one node and recreates pods
// with the same names: the new pods fill the node that lost them.
func TestDeletedPodsAreReplaced(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(nodeSpec{name: "churn-a"}, nodeSpec{name: "churn-b"}, nodeSpec{name: "churn-c"})
	capture := &pluginCapture{}
	tc.startScheduler(schedulerConfig(adminKubeconfig, 3, ""), capture.option())
	var names []string
	for i := range 6 {
		names = append(names, tc.createPod(tc.makePod(fmt.Sprintf("churn-%d", i))).Name)
	}
	placed := tc.waitScheduled(names...)
	victim := placed[names[0]]
	var deleted []string
	for name, node := range placed {
		if node == victim {
			tc.deletePod(tc.ns, name)
			deleted = append(deleted, name)
		}
	}
	if err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		return tc.podsPerNode(nodes, nil)[victim] == 0, nil
	}); err != nil {
		t.Fatalf("pods of %s were not deleted: %v", victim, err)
	}
	tc.waitCountsMatch(capture, nodes)
	for _, name := range deleted {
		tc.createPod(tc.makePod(name))
	}
	for name, node := range tc.waitScheduled(deleted...) {
		if node != victim {
			t.Errorf("recreated pod %s landed on %s, want %s (the node that lost its pods)", name, node, victim)
		}
	}
	tc.waitCountsMatch(capture, nodes)
}
