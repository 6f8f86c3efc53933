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

// Package share decides, for one workload, which of its pods must run on
// on-demand capacity: how many of n replicas the minimum requires, which
// slot holds which capacity class, the lowest free slot, the deletion cost
// that makes a ReplicaSet give up high slots first, the node requirements
// of each class per platform preset, and the required node affinity a gated
// pod may be given. It is pure: no client calls and no side effects.
package share

import (
	"math"
	"strconv"
)

// Class is the capacity class decided for a slot.
type Class string

const (
	// OnDemand is capacity the provider does not reclaim.
	OnDemand Class = "on-demand"
	// Spot is interruptible capacity.
	Spot Class = "spot"
)

// DeletionCostAnnotation is read by the ReplicaSet controller when it picks
// pods to delete on scale-down: a lower cost goes first (ActivePodsWithRanks
// in k8s.io/kubernetes pkg/controller/controller_utils.go).
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// Required is how many of n replicas must be on-demand:
// min(n, max(minCount, ceil(minPercent*n/100))), and 0 for n <= 0.
//
// Validation keeps minCount >= 0 and minPercent in 0..100; values outside
// still give a count in 0..n rather than a panic or an overflow: a percent
// above 100 means every replica, a negative count or percent means none.
// So one replica at 30% needs ceil(0.3) = 1 on-demand pod.
func Required(n, minCount, minPercent int32) int32 {
	if n <= 0 {
		return 0
	}
	count := max(int64(minCount), 0)
	pct := min(max(int64(minPercent), 0), 100)
	// pct*n <= 100*MaxInt32, far inside int64.
	byPercent := (pct*int64(n) + 99) / 100
	return int32(min(int64(n), max(count, byPercent)))
}

// SlotClass is the class of slot (1-based): on-demand iff Required rises
// from slot-1 to slot.
//
// Required never rises by more than one from n-1 to n (the percent term
// grows by at most minPercent/100 <= 1 per replica, and min and max of such
// functions keep that), and never falls. Hence the prefix property: for
// every n, slots 1..n hold exactly Required(n) on-demand slots, so keeping
// the lowest slots filled keeps the minimum. At 30%: slots 1, 4, 7, 11, 14...
// Slots below 1 are not slots and are spot (no requirement).
func SlotClass(slot, minCount, minPercent int32) Class {
	if slot < 1 {
		return Spot
	}
	if Required(slot, minCount, minPercent) > Required(slot-1, minCount, minPercent) {
		return OnDemand
	}
	return Spot
}

// LowestFreeSlot is the smallest slot >= 1 for which taken is false, so a
// new pod fills the first gap that scale-down or a lost pod left.
//
// It calls taken for 1, 2, ... up to the answer: with k slots taken that is
// at most k+1 calls, O(k) for a map lookup. It returns 0 only if every
// slot up to math.MaxInt32 is taken.
func LowestFreeSlot(taken func(slot int32) bool) int32 {
	for slot := int32(1); ; slot++ {
		if !taken(slot) {
			return slot
		}
		if slot == math.MaxInt32 {
			return 0
		}
	}
}

// DeletionCost is the value of DeletionCostAnnotation for a pod in slot:
// -slot, so the ReplicaSet controller deletes the highest slots first and
// the lowest ones, which hold the on-demand prefix, stay. A slot below 1 gets
// "0", the cost of a pod without the annotation; every result parses as the
// int32 the API server requires.
func DeletionCost(slot int32) string {
	if slot < 1 {
		return "0"
	}
	return strconv.FormatInt(-int64(slot), 10)
}
