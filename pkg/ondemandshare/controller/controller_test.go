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
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// checkExact asserts that pods, one slot space, hold slots 1..len(pods) once
// each, each with its slot's class, cost and required affinity, and so
// exactly Required(n) on-demand. Each must require its class of its node.
func checkExact(t *testing.T, pol *policy.Policy, pods []*v1.Pod) {
	t.Helper()
	seen := map[int32]string{}
	onDemand := int32(0)
	for _, p := range pods {
		if hasGate(p) {
			t.Errorf("pod %s still gated", p.Name)
			continue
		}
		slot := slotOf(p)
		if other, dup := seen[slot]; dup {
			t.Errorf("slot %d assigned to %s and %s", slot, other, p.Name)
		}
		seen[slot] = p.Name
		class := share.Class(p.Labels[share.ClassLabel])
		if want := pol.SlotClass(slot); class != want {
			t.Errorf("pod %s: slot %d class %q, want %q", p.Name, slot, class, want)
		}
		if got, want := p.Annotations[share.DeletionCostAnnotation], share.DeletionCost(slot); got != want {
			t.Errorf("pod %s: deletion cost %q, want %q", p.Name, got, want)
		}
		if own, ok := ownClass(pol, p); !ok || own != class {
			t.Errorf("pod %s of class %s does not require it: affinity %v, nodeSelector %v", p.Name, class, p.Spec.Affinity, p.Spec.NodeSelector)
		}
		if class == share.OnDemand {
			onDemand++
		}
	}
	for s := int32(1); s <= int32(len(pods)); s++ {
		if _, ok := seen[s]; !ok {
			t.Errorf("slot %d is not held; slots %v", s, seen)
		}
	}
	if want := pol.Required(int32(len(pods))); onDemand != want {
		t.Errorf("%d of %d pods on-demand, want exactly %d", onDemand, len(pods), want)
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

func pick(pods map[string]*v1.Pod, names []string) []*v1.Pod {
	out := make([]*v1.Pod, len(names))
	for i, n := range names {
		out[i] = pods[n]
	}
	return out
}

// TestBurst: 50 gated pods of one Deployment's ReplicaSet, 30%: slots 1..50
// in creation order, exactly 15 on-demand in slots 1, 4, 7, 11, 14...
func TestBurst(t *testing.T) {
	h := newHarness(t, 0)
	rs := h.replicaSet("web-1", "web")
	// Names in random order, so that creation order is not name order.
	all := names("p-", 50)
	created := slices.Clone(all)
	rand.Shuffle(len(created), func(i, j int) { created[i], created[j] = created[j], created[i] })
	const other = "example.com/queue"
	for i, n := range created {
		h.pod(n, "main", rs, func(p *v1.Pod) {
			if i == 7 {
				p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: other})
			}
		})
	}
	h.start(2)
	pods := h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))

	var onDemand []int32
	for i, n := range created {
		if got := slotOf(pods[n]); got != int32(i+1) {
			t.Errorf("pod %s, created %d., has slot %d", n, i+1, got)
		}
		if pods[n].Labels[share.ClassLabel] == string(share.OnDemand) {
			onDemand = append(onDemand, slotOf(pods[n]))
		}
	}
	slices.Sort(onDemand)
	if want := []int32{1, 4, 7, 11, 14}; !slices.Equal(onDemand[:5], want) {
		t.Errorf("first on-demand slots %v, want %v", onDemand[:5], want)
	}
	if got := pods[created[7]].Spec.SchedulingGates; len(got) != 1 || got[0].Name != other {
		t.Errorf("the other gate was not kept: %v", got)
	}
	h.waitEvents("Normal "+ReasonDecided, 50)
}

// TestInterleavedWithLag: 4 workers, two ReplicaSets of one Deployment
// (each numbers its slots from 1), pods created while the controller runs,
// and every pod event reaching the informer 40ms late. No slot is ever
// written to two pods.
func TestInterleavedWithLag(t *testing.T) {
	h := newHarness(t, 40*time.Millisecond)
	old, cur := h.replicaSet("web-1", "web"), h.replicaSet("web-2", "web")
	type slotOfSpace struct {
		space string
		slot  int32
	}
	var mu sync.Mutex
	written := map[slotOfSpace]string{}
	var dups []string
	h.start(4, WithHook(func(d Decision) {
		mu.Lock()
		defer mu.Unlock()
		k := slotOfSpace{metaController(d.Pod), d.Slot}
		if prev, ok := written[k]; ok && prev != d.Pod.Name {
			dups = append(dups, fmt.Sprintf("slot %d of %s: %s and %s", d.Slot, k.space, prev, d.Pod.Name))
		}
		written[k] = d.Pod.Name
	}))
	a, b := names("a-", 40), names("b-", 40)
	for i := range a {
		h.pod(a[i], "main", old)
		h.pod(b[i], "main", cur)
		time.Sleep(time.Millisecond) // pacing, so that decisions and creations interleave
	}
	pods := h.waitUngated(append(slices.Clone(a), b...)...)
	checkExact(t, h.policies[0], pick(pods, a))
	checkExact(t, h.policies[0], pick(pods, b))
	mu.Lock()
	if len(dups) > 0 {
		t.Errorf("slots written twice: %v", dups)
	}
	mu.Unlock()
	for _, n := range append(a, b...) {
		if got := h.decisionsOf(n); got != 1 {
			t.Errorf("pod %s decided %d times", n, got)
		}
	}
	// Only a pod decided again from a stale cache can hit a stale
	// resourceVersion: nothing else writes these pods.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conflicts != 0 {
		t.Errorf("%d writes from a stale cache (conflicts)", h.conflicts)
	}
}

func metaController(p *v1.Pod) string { return string(p.OwnerReferences[0].UID) }

// TestRestart: a controller stopped mid-burst; a new one on the same API
// server continues from the pods' slot labels.
func TestRestart(t *testing.T) {
	h := newHarness(t, 0)
	rs := h.replicaSet("web-1", "web")
	first := names("p-", 30)
	for _, n := range first {
		h.pod(n, "main", rs)
	}
	// The first controller stops (its context is cancelled) at its 10th
	// decision, with 20 pods still gated.
	var decided atomic.Int32
	_, stop := h.start(1, WithHook(func(Decision) {
		if decided.Add(1) == 10 {
			h.cancel()
		}
	}))
	h.waitFor("the first controller's 10th decision", func() bool { return decided.Load() >= 10 })
	stop()
	before := h.podsNow()
	n := 0
	for _, p := range before {
		if slotOf(p) > 0 {
			n++
		}
	}
	if n != 10 {
		t.Fatalf("%d of 30 decided before the restart, want 10", n)
	}

	h.start(3)
	more := names("q-", 20)
	for _, n := range more {
		h.pod(n, "main", rs)
	}
	all := append(slices.Clone(first), more...)
	pods := h.waitUngated(all...)
	checkExact(t, h.policies[0], pick(pods, all))
	for n, p := range before {
		if s := slotOf(p); s > 0 && slotOf(pods[n]) != s {
			t.Errorf("pod %s moved from slot %d to %d", n, s, slotOf(pods[n]))
		}
	}
	for _, n := range all {
		if got := h.decisionsOf(n); got != 1 {
			t.Errorf("pod %s decided %d times", n, got)
		}
	}
}
