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
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

func compiled(t *testing.T, preset config.CapacityPreset) *policy.Policy {
	t.Helper()
	args := policyArgs("main", 30)
	args.Capacity.Preset = preset
	ps, err := policy.Compile(&config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{args}})
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func req(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func withTerms(terms ...[]v1.NodeSelectorRequirement) *v1.Pod {
	sel := &v1.NodeSelector{}
	for _, t := range terms {
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, v1.NodeSelectorTerm{MatchExpressions: t})
	}
	return &v1.Pod{Spec: v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}}}
}

func TestOwnClassDetection(t *testing.T) {
	const karp, gke, zone = "karpenter.sh/capacity-type", "cloud.google.com/gke-spot", "topology.kubernetes.io/zone"
	in, notIn, dne := v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpDoesNotExist
	tests := []struct {
		name   string
		preset config.CapacityPreset
		pod    *v1.Pod
		want   share.Class // "" for none
	}{
		{name: "nothing required", preset: config.CapacityKarpenter, pod: &v1.Pod{}},
		{name: "nodeSelector spot", preset: config.CapacityKarpenter, pod: &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{karp: "spot"}}}, want: share.Spot},
		{name: "zone only", preset: config.CapacityKarpenter, pod: withTerms([]v1.NodeSelectorRequirement{req(zone, in, "a")})},
		{name: "on-demand in one term of two", preset: config.CapacityKarpenter, pod: withTerms(
			[]v1.NodeSelectorRequirement{req(karp, in, "on-demand")}, []v1.NodeSelectorRequirement{req(zone, in, "a")})},
		{name: "on-demand in both terms", preset: config.CapacityKarpenter, pod: withTerms(
			[]v1.NodeSelectorRequirement{req(karp, in, "on-demand")}, []v1.NodeSelectorRequirement{req(zone, in, "a"), req(karp, in, "on-demand")}), want: share.OnDemand},
		{name: "either class", preset: config.CapacityKarpenter, pod: withTerms([]v1.NodeSelectorRequirement{req(karp, in, "on-demand", "spot")})},
		{name: "NotIn spot is not on-demand under Karpenter", preset: config.CapacityKarpenter, pod: withTerms([]v1.NodeSelectorRequirement{req(karp, notIn, "spot")})},
		{name: "empty term ignored, nodeSelector ANDed", preset: config.CapacityKarpenter, pod: func() *v1.Pod {
			p := withTerms(nil, []v1.NodeSelectorRequirement{req(zone, in, "a")})
			p.Spec.NodeSelector = map[string]string{karp: "on-demand"}
			return p
		}(), want: share.OnDemand},
		{name: "GKE on-demand: spot label absent", preset: config.CapacityGKE, pod: withTerms([]v1.NodeSelectorRequirement{req(gke, dne)}), want: share.OnDemand},
		{name: "GKE spot", preset: config.CapacityGKE, pod: &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{gke: "true"}}}, want: share.Spot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ownClass(compiled(t, tc.preset), tc.pod)
			if !ok {
				got = ""
			}
			if got != tc.want {
				t.Errorf("ownClass = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDecidedPod: labels, cost, the class ANDed into the pod's own terms,
// the AKS spot toleration added once, and only our gate removed.
func TestDecidedPod(t *testing.T) {
	p := compiled(t, config.CapacityAKS)
	_, tols := p.Requirements(share.Spot)
	zone := req("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "a")
	pod := withTerms([]v1.NodeSelectorRequirement{zone})
	pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "a"}, {Name: share.SchedulingGate}, {Name: "b"}}
	before := pod.DeepCopy()
	got := decidedPod(pod, p, 5, share.Spot, false)
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("the cached pod changed:\n%s", diff)
	}
	reqs, _ := p.Requirements(share.Spot)
	want := withTerms(append([]v1.NodeSelectorRequirement{zone}, reqs...))
	want.Labels = map[string]string{share.SlotLabel: "5", share.ClassLabel: "spot"}
	want.Annotations = map[string]string{share.DeletionCostAnnotation: "-5"}
	want.Spec.Tolerations = tols
	want.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "a"}, {Name: "b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decidedPod (-want +got):\n%s", diff)
	}
	again := decidedPod(got, p, 5, share.Spot, true)
	if diff := cmp.Diff(got.Spec.Tolerations, again.Spec.Tolerations); diff != "" {
		t.Errorf("a present toleration was added again:\n%s", diff)
	}
	if diff := cmp.Diff(got.Spec.Affinity, again.Spec.Affinity); diff != "" {
		t.Errorf("a pod of its own class had its affinity changed:\n%s", diff)
	}
}

func TestExpectations(t *testing.T) {
	e := newExpectations()
	k := Key{Policy: "main", Namespace: ns, Kind: "Deployment", Name: "web"}
	e.expect(k, "a", "rs1", 1)
	e.expect(k, "b", "rs1", 2)
	e.expect(k, "c", "rs2", 1)
	slots := map[int32]bool{}
	e.taken(k, "rs1", slots)
	if diff := cmp.Diff(map[int32]bool{1: true, 2: true}, slots); diff != "" {
		t.Errorf("taken in rs1 (-want +got):\n%s", diff)
	}
	if !e.has(k, "a") || e.has(Key{Policy: "other"}, "a") {
		t.Error("has: expectations leak across keys or were lost")
	}
	e.observe(k, func(uid types.UID) bool { return uid == "b" })
	if e.has(k, "a") || !e.has(k, "b") || e.len() != 1 {
		t.Errorf("observe kept the wrong ones: %v", e.m)
	}
	e.drop(k, "b")
	if e.len() != 0 || len(e.m) != 0 {
		t.Errorf("drop left %v", e.m)
	}
}

// TestAsSpot: the spot form of an on-demand decision undoes exactly what
// the decision added: the single term it created, or the requirements it
// appended to each non-empty term (an empty term stays as it was).
func TestAsSpot(t *testing.T) {
	p := compiled(t, config.CapacityAKS)
	onDemand, _ := p.Requirements(share.OnDemand)
	spot, tols := p.Requirements(share.Spot)
	zone := req("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "a")
	for name, tc := range map[string]struct{ pod, want *v1.Pod }{
		"no terms": {pod: &v1.Pod{}, want: withTerms(spot)},
		"terms":    {pod: withTerms([]v1.NodeSelectorRequirement{zone}, nil), want: withTerms(append([]v1.NodeSelectorRequirement{zone}, spot...), nil)},
	} {
		t.Run(name, func(t *testing.T) {
			decided := decidedPod(tc.pod, p, 2, share.OnDemand, false)
			got := asSpot(p, decided)
			if diff := cmp.Diff(tc.want.Spec.Affinity, got.Spec.Affinity); diff != "" {
				t.Errorf("affinity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(append(decided.Spec.Tolerations, tols...), got.Spec.Tolerations); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(requiredOf(tc.pod), requiredOf(preDecision(decided, onDemand))); diff != "" {
				t.Errorf("preDecision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFallbackCost: an int32, below every slot's cost, lower for a higher
// slot, and a weight Karpenter still counts: it weighs a pod at
// 1 + cost/2^27 and a node whose pods weigh 0 or less is "Empty", so a
// lower cost gets a node with Running fallback pods deleted.
func TestFallbackCost(t *testing.T) {
	prev := int64(math.MaxInt64)
	for _, slot := range []int32{1, 2, 1 << 25, 1 << 30, math.MaxInt32} {
		got, err := strconv.ParseInt(fallbackCost(slot), 10, 32)
		if err != nil {
			t.Errorf("slot %d: %v", slot, err)
		}
		if last, _ := strconv.ParseInt(share.DeletionCost(1<<26-1), 10, 32); got >= last {
			t.Errorf("slot %d: cost %d is not below %d", slot, got, last)
		}
		if w := 1 + float64(got)/(1<<27); w < 0.25 {
			t.Errorf("slot %d: cost %d weighs %.2f for Karpenter, want 0.25 or more", slot, got, w)
		}
		if slot <= 1<<25 && got >= prev {
			t.Errorf("slot %d: cost %d is not below a lower slot's %d", slot, got, prev)
		}
		prev = got
	}
}

func requiredOf(p *v1.Pod) *v1.NodeSelector {
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}
