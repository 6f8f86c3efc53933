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
	"testing"
	"time"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// spotPod starts tm with two pods of Deployment web, slots 1 (on-demand)
// and 2 (spot), and returns the spot one's name.
func (tm *timers) spotPod() string {
	tm.t.Helper()
	rs := tm.replicaSet("web-1", "web")
	tm.pod("p-0", "main", rs)
	tm.pod("p-1", "main", rs)
	tm.start()
	pods := tm.waitUngated("p-0", "p-1")
	if got := pods["p-1"].Labels[share.ClassLabel]; got != string(share.Spot) || slotOf(pods["p-1"]) != 2 {
		tm.t.Fatalf("p-1: slot %d class %s, want slot 2 spot", slotOf(pods["p-1"]), got)
	}
	return "p-1"
}

// TestSpotWaitTimeout: a spot pod Unschedulable for the 5m timeout is
// deleted once, with preconditions; the next pod decided into its slot
// goes on-demand with the fallback annotation, a lower deletion cost, a
// Warning event and Decision.Fallback; the slot after it is spot again.
func TestSpotWaitTimeout(t *testing.T) {
	tm := newTimers(t, timerPolicy(5*time.Minute, 0, 1))
	spot := tm.spotPod()
	tm.waitWake(tm.unschedulable(spot, t0), t0.Add(5*time.Minute))
	// A real clock wakes a little late: the event says 5m0s all the same.
	tm.clk.Step(5*time.Minute + 1234*time.Microsecond)
	tm.waitFor("the spot pod deleted", func() bool { _, ok := tm.podsNow()[spot]; return !ok })

	rs := controllerRef("apps/v1", "ReplicaSet", "web-1")
	tm.pod("p-2", "main", rs)
	p := tm.waitUngated("p-2")["p-2"]
	if slotOf(p) != 2 || p.Labels[share.ClassLabel] != string(share.OnDemand) || p.Annotations[share.FallbackAnnotation] != FallbackSpotTimeout {
		t.Errorf("replacement: slot %d class %s fallback %q, want slot 2 on-demand %s", slotOf(p), p.Labels[share.ClassLabel], p.Annotations[share.FallbackAnnotation], FallbackSpotTimeout)
	}
	if own, ok := ownClass(tm.policies[0], p); !ok || own != share.OnDemand {
		t.Errorf("replacement does not require on-demand: %v", p.Spec.Affinity)
	}
	if got := p.Annotations[share.DeletionCostAnnotation]; got != fallbackCost(2) {
		t.Errorf("replacement's deletion cost %s, want %s", got, fallbackCost(2))
	}
	tm.waitEvents("Warning "+ReasonSpotWaitTimeout+" p-2: Slot 2 of Deployment web falls back to on-demand: pod p-1 waited 5m0s", 1)
	// The hook runs after the event is recorded.
	tm.waitFor("p-2's decision", func() bool {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		return tm.decisions[len(tm.decisions)-1].Pod.Name == "p-2"
	})
	tm.mu.Lock()
	if d := tm.decisions[len(tm.decisions)-1]; d.Pod.Name != "p-2" || d.Fallback != FallbackSpotTimeout || d.Class != share.OnDemand {
		t.Errorf("last decision %s %s fallback %q, want p-2 on-demand %s", d.Pod.Name, d.Class, d.Fallback, FallbackSpotTimeout)
	}
	tm.mu.Unlock()

	tm.pod("p-3", "main", rs)
	if p := tm.waitUngated("p-3")["p-3"]; slotOf(p) != 3 || p.Labels[share.ClassLabel] != string(share.Spot) || p.Annotations[share.FallbackAnnotation] != "" {
		t.Errorf("p-3: slot %d class %s fallback %q, want slot 3 spot without fallback", slotOf(p), p.Labels[share.ClassLabel], p.Annotations[share.FallbackAnnotation])
	}
	// The on-demand fallback pod waits untimed.
	tm.waitWake(tm.unschedulable("p-2", tm.clk.Now()), time.Time{})
	tm.clk.Step(time.Hour)
	if deleted, _, _ := tm.counts(); deleted != 1 {
		t.Errorf("%d pods deleted, want 1", deleted)
	}
}

// TestBoundInTime: a spot pod bound 4m into its 5m wait is left alone
// when the 5m pass.
func TestBoundInTime(t *testing.T) {
	tm := newTimers(t, timerPolicy(5*time.Minute, 0, 1))
	spot := tm.spotPod()
	tm.waitWake(tm.unschedulable(spot, t0), t0.Add(5*time.Minute))
	tm.clk.Step(4 * time.Minute)
	tm.waitWake(tm.bind(spot, "node-1"), time.Time{})
	n := tm.syncs()
	tm.clk.Step(2 * time.Minute)
	// The delay queued for 5m still fires and syncs the workload once more.
	tm.waitWake(n, time.Time{})
	if deleted, _, _ := tm.counts(); deleted != 0 {
		t.Errorf("%d pods deleted, want none", deleted)
	}
}

// TestNoTimeout: with spotWaitTimeout 0 a spot pod waits forever.
func TestNoTimeout(t *testing.T) {
	tm := newTimers(t, timerPolicy(0, 0, 1))
	spot := tm.spotPod()
	tm.clk.Step(time.Hour)
	tm.waitWake(tm.unschedulable(spot, t0), time.Time{})
	tm.clk.Step(24 * time.Hour)
	tm.waitWake(tm.unschedulable(spot, t0.Add(time.Minute)), time.Time{})
	if deleted, _, _ := tm.counts(); deleted != 0 {
		t.Errorf("%d pods deleted, want none", deleted)
	}
}

// TestFallbackSlotStaysOnDemand: a fallback pod taken away by someone else
// (Karpenter consolidating its node, a drain) is replaced on-demand at
// once, also by a controller that never saw the timeout (a restart): the
// replacement waiting for spot again would time out again, a loop of
// deletions while spot is gone. Recovery (off here) alone returns a slot to
// spot; a slot that never fell back stays spot.
func TestFallbackSlotStaysOnDemand(t *testing.T) {
	tm := newTimers(t, timerPolicy(5*time.Minute, 0, 1))
	rs := tm.replicaSet("web-1", "web")
	tm.pod("p-1", "main", rs)
	tm.fallbackPod("f-2", rs, 2, "od-1")
	tm.start()
	if p := tm.waitUngated("p-1")["p-1"]; slotOf(p) != 1 {
		t.Fatalf("p-1 took slot %d, want 1", slotOf(p))
	}
	tm.pod("p-3", "main", rs)
	tm.waitUngated("p-3")

	for _, name := range []string{"f-2", "p-3"} {
		if err := tm.client.Tracker().Delete(podsGVR, ns, name); err != nil {
			t.Fatal(err)
		}
	}
	tm.waitFor("f-2 and p-3 gone from the cache", func() bool {
		_, f2 := tm.podsNow()["f-2"]
		_, p3 := tm.podsNow()["p-3"]
		return !f2 && !p3
	})
	tm.pod("r-2", "main", rs)
	r2 := tm.waitUngated("r-2")["r-2"]
	if slotOf(r2) != 2 || r2.Labels[share.ClassLabel] != string(share.OnDemand) || r2.Annotations[share.FallbackAnnotation] != FallbackSpotTimeout {
		t.Errorf("r-2: slot %d class %s fallback %q, want slot 2 on-demand %s", slotOf(r2), r2.Labels[share.ClassLabel], r2.Annotations[share.FallbackAnnotation], FallbackSpotTimeout)
	}
	tm.waitEvents("Normal "+ReasonSpotWaitTimeout+" r-2: Slot 2 of Deployment web stays on-demand: pod f-2 before it had fallen back", 1)
	tm.pod("r-3", "main", rs)
	if r3 := tm.waitUngated("r-3")["r-3"]; slotOf(r3) != 3 || r3.Labels[share.ClassLabel] != string(share.Spot) || r3.Annotations[share.FallbackAnnotation] != "" {
		t.Errorf("r-3: slot %d class %s fallback %q, want slot 3 spot without fallback", slotOf(r3), r3.Labels[share.ClassLabel], r3.Annotations[share.FallbackAnnotation])
	}
	if deleted, evicted, _ := tm.counts(); deleted != 0 || evicted != 0 {
		t.Errorf("the controller deleted %d and evicted %d pods, want none", deleted, evicted)
	}
}
