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

// PreBindPreFlight returns a PreBindPreFlightResult since 1.36.

package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// handleCapture wraps the registered NodeLessPods factory to keep the
// framework handle it is given, so that the test can ask the scheduler's own
// informers what they have seen.
type handleCapture struct {
	mu sync.Mutex
	h  fwk.Handle
}

func (c *handleCapture) option() app.Option {
	return func(r frameworkruntime.Registry) error {
		r[nodelesspods.Name] = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			c.mu.Lock()
			c.h = h
			c.mu.Unlock()
			return nodelesspods.New(ctx, obj, h)
		}
		return nil
	}
}

// waitNodeGone waits until the scheduler's node informer has seen the node
// deleted.
func (tc *testContext) waitNodeGone(c *handleCapture, name string) {
	tc.t.Helper()
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		h := c.h
		c.mu.Unlock()
		if h == nil {
			return false, nil
		}
		_, err := h.SharedInformerFactory().Core().V1().Nodes().Lister().Get(name)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		tc.t.Fatalf("the scheduler did not see node %s deleted: %v", name, err)
	}
}

// TestFailedBindingLeavesCountsTrue makes the first binding attempt of every
// pod fail after Reserve: the scheduler forgets the assumed pod, and the
// pod is scheduled on its next attempt. The counts must stay true: pods
// created afterwards, enough to bring every node one above the fullest, end
// with the same number of pods on every node.
func TestFailedBindingLeavesCountsTrue(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(makeNode("fail-a"), makeNode("fail-b"), makeNode("fail-c"))
	injector := &failOnce{failed: map[string]string{}}
	config := nodeLessPodsConfig(nil, failOnceName)
	tc.startScheduler(config, app.WithPlugin(failOnceName, func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return injector, nil
	}))

	var names []string
	for i := range 6 {
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
	// No spread check for the flaky pods: a pod whose binding failed keeps
	// the node it was nominated to, and its retry goes straight there
	// without scoring (the scheduler's nominated-node fast path).
	counts := tc.podsPerNode(nodes, nil)
	fullest, total := 0, 0
	for _, n := range counts {
		fullest, total = max(fullest, n), total+n
	}
	names = nil
	for i := range len(nodes)*(fullest+1) - total {
		names = append(names, tc.createPod(tc.makePod(fmt.Sprintf("after-%d", i))).Name)
	}
	tc.waitScheduled(names...)
	final := tc.podsPerNode(nodes, nil)
	if s := spread(final); s != 0 {
		t.Errorf("pods per node %v after the flaky pods (%v) and %d more: spread %d, want 0", final, counts, len(names), s)
	}
}

// TestNodeDeletedWhilePodsPending deletes a node that holds pods while new
// pods wait behind a scheduling gate: once released, they spread over the
// remaining nodes, and the deleted node counts nothing.
func TestNodeDeletedWhilePodsPending(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(makeNode("gone-a"), makeNode("gone-b"), makeNode("gone-c"))
	capture := &handleCapture{}
	tc.startScheduler(nodeLessPodsConfig(nil), capture.option())
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
	tc.waitNodeGone(capture, "gone-a")
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
// starts a new one: it counts the pods the first one bound and keeps the
// balance.
func TestSchedulerRestartRebuildsCounts(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(makeNode("restart-a"), makeNode("restart-b"), makeNode("restart-c"))
	first := tc.startScheduler(nodeLessPodsConfig(nil))
	var names []string
	for i := range 4 {
		names = append(names, tc.createPod(tc.makePod(fmt.Sprintf("before-%d", i))).Name)
	}
	tc.waitScheduled(names...)
	first.Stop()

	tc.startScheduler(nodeLessPodsConfig(nil))
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
	nodes := tc.createNodes(makeNode("churn-a"), makeNode("churn-b"), makeNode("churn-c"))
	tc.startScheduler(nodeLessPodsConfig(nil))
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
	// The scheduler's pod informer delivers the deletions before the
	// creations that follow them.
	for _, name := range deleted {
		tc.createPod(tc.makePod(name))
	}
	for name, node := range tc.waitScheduled(deleted...) {
		if node != victim {
			t.Errorf("recreated pod %s landed on %s, want %s (the node that lost its pods)", name, node, victim)
		}
	}
}
