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
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const interval = 10 * time.Minute

// TestRecoveryNeedsFittingSpot: a fallback pod (1 CPU, zone a unless
// said) on an on-demand node is evicted after one interval only when a spot
// node fits it now.
func TestRecoveryNeedsFittingSpot(t *testing.T) {
	notReady := func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }
	cases := []struct {
		name    string
		spot    []func(*v1.Node)
		class   string
		pod     []func(*v1.Pod)
		full    bool
		evicted int
	}{
		{name: "fits", class: "spot", evicted: 1},
		{name: "full", class: "spot", full: true},
		{name: "tainted", class: "spot", spot: []func(*v1.Node){func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "gpu", Effect: v1.TaintEffectNoSchedule}}
		}}},
		{name: "tainted and tolerated", class: "spot", evicted: 1, spot: []func(*v1.Node){func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "gpu", Effect: v1.TaintEffectNoExecute}}
		}}, pod: []func(*v1.Pod){func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists}}
		}}},
		{name: "not ready", class: "spot", spot: []func(*v1.Node){notReady}},
		{name: "cordoned", class: "spot", spot: []func(*v1.Node){func(n *v1.Node) { n.Spec.Unschedulable = true }}},
		{name: "on-demand", class: "on-demand"},
		{name: "no class", class: ""},
		{name: "other zone", class: "spot", pod: []func(*v1.Pod){func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}},
			}}}
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTimers(t, timerPolicy(5*time.Minute, interval, 1))
			tm.node("od-1", "on-demand")
			tm.node("candidate", tc.class, tc.spot...)
			if tc.full {
				tm.pod("filler", "", metav1.OwnerReference{}, withCPU("3.5"), func(p *v1.Pod) {
					delete(p.Labels, share.PolicyLabel)
					p.Spec.SchedulingGates = nil
					p.Spec.NodeName = "candidate"
				})
			}
			tm.fallbackPod("f-2", controllerRef("apps/v1", "ReplicaSet", "web-1"), 2, "od-1", tc.pod...)
			tm.replicaSet("web-1", "web")
			tm.start()
			tm.waitWake(0, t0.Add(interval))
			n := tm.syncs()
			tm.clk.Step(interval)
			tm.waitWake(n, t0.Add(2*interval))
			if _, evicted, _ := tm.counts(); evicted != tc.evicted {
				t.Errorf("%d evictions, want %d", evicted, tc.evicted)
			}
		})
	}
}

// TestRecoveryBounded: at most 2 evictions per interval, lowest slots
// first; a fallback pod in an on-demand slot (4) is never evicted; a 429
// waits for the next interval.
func TestRecoveryBounded(t *testing.T) {
	tm := newTimers(t, timerPolicy(5*time.Minute, interval, 2))
	tm.node("od-1", "on-demand")
	tm.node("spot-1", "spot")
	rs := controllerRef("apps/v1", "ReplicaSet", "web-1")
	for _, s := range []int32{2, 3, 4, 5} {
		tm.fallbackPod(fmt.Sprintf("f-%d", s), rs, s, "od-1")
	}
	tm.replicaSet("web-1", "web")
	tm.refuse.Store(1)
	tm.start()
	tm.waitWake(0, t0.Add(interval))

	step := func(k int, evicted, attempted int, left ...string) {
		t.Helper()
		n := tm.syncs()
		tm.clk.Step(interval)
		tm.waitWake(n, t0.Add(time.Duration(k+1)*interval))
		if _, e, a := tm.counts(); e != evicted || a != attempted {
			t.Errorf("interval %d: %d evictions of %d attempts, want %d of %d", k, e, a, evicted, attempted)
		}
		tm.waitFor("evicted pods gone", func() bool { return len(tm.podsNow()) == len(left) })
		pods := tm.podsNow()
		for _, name := range left {
			if pods[name] == nil {
				t.Errorf("interval %d: %s was evicted", k, name)
			}
		}
	}
	// The first attempt gets a 429: nothing more this interval.
	step(1, 0, 1, "f-2", "f-3", "f-4", "f-5")
	step(2, 2, 3, "f-4", "f-5")
	tm.mu.Lock()
	if want := []string{"f-2", "f-3"}; len(tm.evicted) != 2 || tm.evicted[0] != want[0] || tm.evicted[1] != want[1] {
		t.Errorf("evicted %v, want %v", tm.evicted, want)
	}
	tm.mu.Unlock()
	n := tm.syncs()
	tm.clk.Step(interval)
	tm.waitWake(n, t0.Add(4*interval))
	if _, e, _ := tm.counts(); e != 3 {
		t.Errorf("%d evictions after 3 intervals, want 3", e)
	}
	pods := tm.podsNow()
	if pods["f-4"] == nil || pods["f-5"] != nil {
		t.Errorf("want f-5 evicted and f-4 (an on-demand slot) kept; pods %v", len(pods))
	}
	tm.waitEvents("Normal "+ReasonSpotRecovery, 3)
}

// TestRecoveryBackoff: a recovered pod that times out again doubles the
// workload's recovery interval: the next eviction comes two intervals
// after the new fallback pod is bound, not one.
func TestRecoveryBackoff(t *testing.T) {
	const timeout = 5 * time.Minute
	tm := newTimers(t, timerPolicy(timeout, interval, 1))
	tm.node("od-1", "on-demand")
	tm.node("spot-1", "spot")
	rs := controllerRef("apps/v1", "ReplicaSet", "web-1")
	tm.fallbackPod("f-2", rs, 2, "od-1")
	tm.replicaSet("web-1", "web")
	tm.pod("p-1", "main", rs) // slot 1, on-demand
	tm.start()
	tm.waitUngated("p-1")
	tm.waitWake(0, t0.Add(interval))
	tm.clk.Step(interval)
	tm.waitFor("f-2 evicted", func() bool { return tm.podsNow()["f-2"] == nil })

	// The replacement goes back to spot, and waits in vain.
	tm.pod("r-2", "main", rs)
	r := tm.waitUngated("r-2")["r-2"]
	if slotOf(r) != 2 || r.Labels[share.ClassLabel] != string(share.Spot) || r.Annotations[share.FallbackAnnotation] != "" {
		t.Fatalf("r-2: slot %d class %s fallback %q, want slot 2 spot without fallback", slotOf(r), r.Labels[share.ClassLabel], r.Annotations[share.FallbackAnnotation])
	}
	tm.waitWake(tm.unschedulable("r-2", tm.clk.Now()), tm.clk.Now().Add(timeout))
	tm.clk.Step(timeout)
	tm.waitFor("r-2 deleted", func() bool { return tm.podsNow()["r-2"] == nil })
	tm.pod("f2-2", "main", rs)
	if p := tm.waitUngated("f2-2")["f2-2"]; p.Annotations[share.FallbackAnnotation] != FallbackSpotTimeout {
		t.Fatalf("f2-2 is not a fallback pod: %v", p.Labels)
	}
	bound := tm.clk.Now()
	tm.waitWake(tm.bind("f2-2", "od-1"), bound.Add(2*interval))
	n := tm.syncs()
	tm.clk.Step(interval)
	tm.pod("p-3", "main", rs) // a sync after the step
	tm.waitWake(n, bound.Add(2*interval))
	if tm.podsNow()["f2-2"] == nil {
		t.Fatal("f2-2 evicted one interval after its fallback: the interval did not double")
	}
	tm.clk.Step(interval)
	tm.waitFor("f2-2 evicted after two intervals", func() bool { return tm.podsNow()["f2-2"] == nil })
}
