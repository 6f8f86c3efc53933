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
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// TestConflictRequeued: the first update of the oldest pod loses a race; the
// workload is requeued and that pod decided once, still into slot 1.
func TestConflictRequeued(t *testing.T) {
	h := newHarness(t, 0)
	rs := h.replicaSet("web-1", "web")
	var conflicts atomic.Int32
	h.client.PrependReactor("update", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pod := a.(clienttesting.UpdateAction).GetObject().(*v1.Pod)
		if pod.Name == "p-00" && conflicts.Add(1) == 1 {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), pod.Name, fmt.Errorf("injected"))
		}
		return false, nil, nil
	})
	all := names("p-", 5)
	for _, n := range all {
		h.pod(n, "main", rs)
	}
	c, _ := h.start(2)
	pods := h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))
	if conflicts.Load() < 2 {
		t.Errorf("p-00 was written %d times: the conflict was not retried", conflicts.Load())
	}
	if got := h.decisionsOf("p-00"); got != 1 {
		t.Errorf("p-00 decided %d times, want 1", got)
	}
	if got := slotOf(pods["p-00"]); got != 1 {
		t.Errorf("p-00 in slot %d, want 1 (the oldest)", got)
	}
	h.waitFor("expectations met", func() bool { return c.exp.len() == 0 })
}

// TestStatefulSetSlots: slot = ordinal+1 whatever the creation order, from
// the pod-index label or, without it, the name.
func TestStatefulSetSlots(t *testing.T) {
	h := newHarness(t, 0)
	owner := controllerRef("apps/v1", "StatefulSet", "db")
	var all []string
	for i := 9; i >= 0; i-- {
		n := fmt.Sprintf("db-%d", i)
		all = append(all, n)
		h.pod(n, "main", owner, func(p *v1.Pod) {
			if i%2 == 0 {
				p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(i)
			}
		})
	}
	h.start(1)
	pods := h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))
	for i := range 10 {
		if got := slotOf(pods[fmt.Sprintf("db-%d", i)]); got != int32(i+1) {
			t.Errorf("db-%d in slot %d, want %d", i, got, i+1)
		}
	}
}

// TestJobSlots: an Indexed Job's pod takes index+1; another Job's pods the
// lowest free slot in creation order.
func TestJobSlots(t *testing.T) {
	h := newHarness(t, 0)
	indexed, plain := controllerRef("batch/v1", "Job", "indexed"), controllerRef("batch/v1", "Job", "plain")
	var ix []string
	for _, i := range []int{3, 0, 4, 1, 2} {
		n := fmt.Sprintf("indexed-%d-x", i)
		ix = append(ix, n)
		h.pod(n, "main", indexed, func(p *v1.Pod) {
			if i == 4 {
				p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: "4"}
			} else {
				p.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(i)
			}
		})
	}
	pl := names("plain-", 4)
	for _, n := range pl {
		h.pod(n, "main", plain)
	}
	h.start(2)
	pods := h.waitUngated(append(slices.Clone(ix), pl...)...)
	checkExact(t, h.policies[0], pick(pods, ix))
	checkExact(t, h.policies[0], pick(pods, pl))
	for _, i := range []int{3, 0, 4, 1, 2} {
		if got := slotOf(pods[fmt.Sprintf("indexed-%d-x", i)]); got != int32(i+1) {
			t.Errorf("index %d in slot %d, want %d", i, got, i+1)
		}
	}
	for i, n := range pl {
		if got := slotOf(pods[n]); got != int32(i+1) {
			t.Errorf("%s in slot %d, want %d", n, got, i+1)
		}
	}
}

// TestUngatedWithoutDecision: pods of an unknown policy, of a kind the
// policy does not count and without a controller are ungated undecided
// (only our gate goes) with a Warning; a pod of another policy counts in
// that policy's slots only.
func TestUngatedWithoutDecision(t *testing.T) {
	other := policyArgs("other", 100)
	h := newHarness(t, 0, policyArgs("main", 30), other)
	rs, bare := h.replicaSet("web-1", "web"), h.replicaSet("bare", "")
	const kueue = "kueue.x-k8s.io/admission"
	h.pod("unknown", "nope", rs, func(p *v1.Pod) {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: kueue})
	})
	h.pod("bare-0", "main", bare)
	h.pod("orphan", "main", metav1.OwnerReference{})
	h.pod("daemon", "main", controllerRef("apps/v1", "DaemonSet", "agent"))
	h.pod("o-0", "other", rs)
	mains := names("m-", 3)
	for _, n := range mains {
		h.pod(n, "main", rs)
	}
	h.start(2)
	undecided := []string{"unknown", "bare-0", "orphan", "daemon"}
	pods := h.waitUngated(append(slices.Clone(undecided), append(mains, "o-0")...)...)
	for _, n := range undecided {
		if p := pods[n]; p.Labels[share.SlotLabel] != "" || p.Labels[share.ClassLabel] != "" || p.Spec.Affinity != nil {
			t.Errorf("pod %s was decided: %v %v", n, p.Labels, p.Spec.Affinity)
		}
	}
	if g := pods["unknown"].Spec.SchedulingGates; len(g) != 1 || g[0].Name != kueue {
		t.Errorf("unknown: gates %v, want only %s", g, kueue)
	}
	for prefix, want := range map[string]int{
		"Warning " + ReasonUnknownPolicy + " unknown:": 1,
		"Warning " + ReasonNotCounted + " bare-0:":     1,
		"Warning " + ReasonNotCounted + " orphan:":     1,
		"Warning " + ReasonNotCounted + " daemon:":     1,
		"Normal " + ReasonDecided:                      4,
	} {
		h.waitEvents(prefix, want)
	}
	checkExact(t, h.policies[0], pick(pods, mains))
	checkExact(t, h.policies[1], pick(pods, []string{"o-0"}))
}

// TestFreedSlot: the on-demand pod of slot 4 is deleted; the next pod takes
// slot 4, on-demand, and the expectations are all met. A failed pod frees
// its slot too.
func TestFreedSlot(t *testing.T) {
	h := newHarness(t, 0)
	rs := h.replicaSet("web-1", "web")
	all := names("p-", 10)
	for _, n := range all {
		h.pod(n, "main", rs)
	}
	c, _ := h.start(1)
	pods := h.waitUngated(all...)
	i := slices.IndexFunc(all, func(n string) bool { return slotOf(pods[n]) == 4 })
	if err := h.client.CoreV1().Pods(ns).Delete(context.Background(), all[i], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	all[i] = "new"
	h.pod("new", "main", rs)
	pods = h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))
	if p := pods["new"]; slotOf(p) != 4 || p.Labels[share.ClassLabel] != string(share.OnDemand) {
		t.Errorf("the new pod has slot %d class %s, want 4 on-demand", slotOf(p), p.Labels[share.ClassLabel])
	}
	h.waitFor("expectations met", func() bool { return c.exp.len() == 0 })

	i = slices.IndexFunc(all, func(n string) bool { return slotOf(pods[n]) == 7 })
	failed := pods[all[i]]
	failed.Status.Phase = v1.PodFailed
	if _, err := h.client.CoreV1().Pods(ns).UpdateStatus(context.Background(), failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	all[i] = "new2"
	h.pod("new2", "main", rs)
	pods = h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))
	if got := slotOf(pods["new2"]); got != 7 {
		t.Errorf("the pod after a failed one has slot %d, want 7", got)
	}
}

// TestOneReplica: one replica at 30% needs ceil(0.3) = 1 on-demand pod.
func TestOneReplica(t *testing.T) {
	h := newHarness(t, 0)
	h.pod("only", "main", h.replicaSet("web-1", "web"))
	h.start(1)
	pods := h.waitUngated("only")
	checkExact(t, h.policies[0], pick(pods, []string{"only"}))
	if got := pods["only"].Labels[share.ClassLabel]; got != string(share.OnDemand) {
		t.Errorf("class %s, want on-demand", got)
	}
}

// TestOwnClass: a pod that requires spot itself takes the lowest free spot
// slot and keeps its affinity; one that requires on-demand the lowest free
// on-demand slot. Both count.
func TestOwnClass(t *testing.T) {
	h := newHarness(t, 0)
	rs := h.replicaSet("web-1", "web")
	h.pod("s", "main", rs, func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"karpenter.sh/capacity-type": "spot"} })
	h.pod("a", "main", rs)
	h.pod("b", "main", rs)
	h.pod("o", "main", rs, func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "karpenter.sh/capacity-type", Operator: v1.NodeSelectorOpIn, Values: []string{"on-demand"}}}}},
		}}}
	})
	h.pod("c", "main", rs)
	// A fixed slot keeps its number but not its class.
	h.pod("db-0", "main", controllerRef("apps/v1", "StatefulSet", "db"), func(p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{"karpenter.sh/capacity-type": "spot"}
	})
	h.start(1)
	pods := h.waitUngated("s", "a", "b", "o", "c", "db-0")
	if p := pods["db-0"]; slotOf(p) != 1 || p.Labels[share.ClassLabel] != string(share.Spot) {
		t.Errorf("db-0: slot %d class %s, want 1 spot", slotOf(p), p.Labels[share.ClassLabel])
	}
	want := map[string]int32{"s": 2, "a": 1, "b": 3, "o": 4, "c": 5}
	for n, slot := range want {
		if got := slotOf(pods[n]); got != slot {
			t.Errorf("%s in slot %d, want %d", n, got, slot)
		}
	}
	checkExact(t, h.policies[0], pick(pods, []string{"s", "a", "b", "o", "c"}))
	if a := pods["s"].Spec.Affinity; a != nil {
		t.Errorf("s: its own requirement was overridden with %v", a)
	}
}

// TestReplicaSetCachedLate: pods whose ReplicaSet the controller has not
// seen yet wait for it, then count in its Deployment.
func TestReplicaSetCachedLate(t *testing.T) {
	h := newHarness(t, 0)
	rs := controllerRef("apps/v1", "ReplicaSet", "web-1")
	all := names("p-", 4)
	for _, n := range all {
		h.pod(n, "main", rs)
	}
	h.start(1)
	h.replicaSet("web-1", "web")
	pods := h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))
	h.waitEvents("Normal "+ReasonDecided, 4)
	if got := h.rec.count("Normal " + ReasonDecided + " p-00: Slot 1 of Deployment web"); got != 1 {
		t.Errorf("p-00 was not decided in Deployment web: %v", h.rec.events)
	}
}
