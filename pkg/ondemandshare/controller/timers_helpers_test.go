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

package controller

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// t0 is when the fake clock starts.
var t0 = time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)

const capacityType = "karpenter.sh/capacity-type"

// timerPolicy is the default policy (30%: slots 1 and 4 on-demand) with a
// spot wait timeout and recovery.
func timerPolicy(timeout, interval time.Duration, maxPods int32) config.OnDemandSharePolicy {
	p := policyArgs("main", 30)
	p.SpotWaitTimeout = metav1.Duration{Duration: timeout}
	p.Recovery = config.SpotRecovery{Interval: metav1.Duration{Duration: interval}, MaxPodsPerInterval: maxPods}
	return p
}

// timers is a harness with a fake clock, an Eviction API that deletes the
// pod at once (or refuses with 429), and a record of what the controller
// deleted, evicted and asked its clock for.
type timers struct {
	*harness
	clk *testingclock.FakeClock
	// refuse is how many of the next evictions get a 429.
	refuse atomic.Int32

	mu        sync.Mutex
	wakes     []time.Time
	deleted   []string
	evicted   []string
	attempted int
	decisions []Decision
}

func newTimers(t *testing.T, pol config.OnDemandSharePolicy) *timers {
	h := newHarness(t, 0, pol)
	tm := &timers{harness: h, clk: testingclock.NewFakeClock(t0)}
	h.client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		d := a.(clienttesting.DeleteAction)
		checkPreconditions(h, d.GetName(), d.GetDeleteOptions().Preconditions)
		tm.mu.Lock()
		tm.deleted = append(tm.deleted, d.GetName())
		tm.mu.Unlock()
		return false, nil, nil
	})
	h.client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction)
		tm.mu.Lock()
		tm.attempted++
		tm.mu.Unlock()
		if tm.refuse.Load() > 0 {
			tm.refuse.Add(-1)
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		// As the API server does: a pod already gone is a 404, not an
		// eviction. A controller whose cache still shows a pod it evicted
		// may ask again; that must not count.
		if _, err := h.client.Tracker().Get(podsGVR, ev.Namespace, ev.Name); apierrors.IsNotFound(err) {
			return true, nil, err
		}
		checkPreconditions(h, ev.Name, ev.DeleteOptions.Preconditions)
		tm.mu.Lock()
		tm.evicted = append(tm.evicted, ev.Name)
		tm.mu.Unlock()
		return true, nil, h.client.Tracker().Delete(podsGVR, ev.Namespace, ev.Name)
	})
	return tm
}

// checkPreconditions fails unless a write that removes pod name is guarded
// by the pod's stored UID and resourceVersion.
func checkPreconditions(h *harness, name string, pre *metav1.Preconditions) {
	cur, err := h.client.Tracker().Get(podsGVR, ns, name)
	if err != nil {
		return
	}
	pod := cur.(*v1.Pod)
	if pre == nil || pre.UID == nil || *pre.UID != pod.UID || pre.ResourceVersion == nil || *pre.ResourceVersion != pod.ResourceVersion {
		h.t.Errorf("removing pod %s without the preconditions UID %s and resourceVersion %s: %+v", name, pod.UID, pod.ResourceVersion, pre)
	}
}

func (tm *timers) start() {
	tm.harness.start(1, WithClock(tm.clk), WithHook(func(d Decision) {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		tm.decisions = append(tm.decisions, d)
	}), func(c *Controller) {
		c.onWake = func(_ Key, at time.Time) {
			tm.mu.Lock()
			defer tm.mu.Unlock()
			tm.wakes = append(tm.wakes, at)
		}
	})
}

// syncs is how many syncs have finished.
func (tm *timers) syncs() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return len(tm.wakes)
}

// waitWake waits for a sync after the first from that asks to run again at
// at (zero: no timer).
func (tm *timers) waitWake(from int, at time.Time) {
	tm.t.Helper()
	tm.waitFor("a sync that wakes at "+at.String(), func() bool {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		return len(tm.wakes) > from && slices.ContainsFunc(tm.wakes[from:], at.Equal)
	})
}

func (tm *timers) counts() (deleted, evicted, attempted int) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return len(tm.deleted), len(tm.evicted), tm.attempted
}

// update changes the stored pod name with change, guarded as the API
// server guards it.
func (tm *timers) update(name string, change func(*v1.Pod)) {
	tm.t.Helper()
	pod, err := tm.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		tm.t.Fatal(err)
	}
	change(pod)
	if _, err := tm.client.CoreV1().Pods(ns).Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		tm.t.Fatal(err)
	}
}

// unschedulable sets pod name's PodScheduled condition to False,
// Unschedulable, since since, and returns how many syncs finished before.
func (tm *timers) unschedulable(name string, since time.Time) int {
	tm.t.Helper()
	n := tm.syncs()
	tm.update(name, func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable, LastTransitionTime: metav1.NewTime(since)}}
	})
	return n
}

// bind binds pod name to node, as the scheduler does; it returns how many
// syncs finished before.
func (tm *timers) bind(name, node string) int {
	tm.t.Helper()
	n := tm.syncs()
	tm.update(name, func(p *v1.Pod) {
		p.Spec.NodeName = node
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(tm.clk.Now())}}
	})
	return n
}

// node creates a Ready node of class (a capacity-type value, or none if
// empty) with 4 CPUs and room for 10 pods.
func (tm *timers) node(name, class string, mods ...func(*v1.Node)) {
	tm.t.Helper()
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"topology.kubernetes.io/zone": "a"}},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("10")},
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	if class != "" {
		n.Labels[capacityType] = class
	}
	for _, m := range mods {
		m(n)
	}
	if _, err := tm.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		tm.t.Fatal(err)
	}
}

// withCPU makes a pod request cpu.
func withCPU(cpu string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}
	}
}

// fallbackPod creates a pod of owner that was decided into slot as a
// fallback to on-demand and is bound to node, requesting 1 CPU.
func (tm *timers) fallbackPod(name string, owner metav1.OwnerReference, slot int32, node string, mods ...func(*v1.Pod)) {
	tm.t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: types.UID("uid-" + name),
		Labels:          map[string]string{share.PolicyLabel: "main"},
		OwnerReferences: []metav1.OwnerReference{owner},
	}}
	withCPU("1")(pod)
	for _, m := range mods {
		m(pod)
	}
	pod = decidedPod(pod, tm.policies[0], slot, share.OnDemand, false)
	pod.Annotations[share.FallbackAnnotation] = FallbackSpotTimeout
	pod.Spec.NodeName = node
	if _, err := tm.client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		tm.t.Fatal(err)
	}
}
