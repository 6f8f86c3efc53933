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

package share

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequired(t *testing.T) {
	tests := []struct {
		name                string
		n, count, pct, want int32
	}{
		{name: "no replicas", n: 0, count: 3, pct: 50, want: 0},
		{name: "negative replicas", n: -5, count: 3, pct: 50, want: 0},
		{name: "one replica at 30% rounds up", n: 1, pct: 30, want: 1},
		{name: "ten at 30%", n: 10, pct: 30, want: 3},
		{name: "eleven at 30%", n: 11, pct: 30, want: 4},
		{name: "fifty at 30%", n: 50, pct: 30, want: 15},
		{name: "count above percent", n: 10, count: 5, pct: 30, want: 5},
		{name: "count capped at n", n: 3, count: 5, want: 3},
		{name: "nothing required", n: 10, want: 0},
		{name: "100%", n: 7, pct: 100, want: 7},
		{name: "percent above 100 means all", n: 7, pct: 130, want: 7},
		{name: "negative percent means none", n: 7, pct: -30, want: 0},
		{name: "negative count means none", n: 7, count: -2, want: 0},
		{name: "max replicas at 30%", n: math.MaxInt32, pct: 30, want: 644245095},
		{name: "max everything", n: math.MaxInt32, count: math.MaxInt32, pct: math.MaxInt32, want: math.MaxInt32},
		{name: "min everything", n: math.MaxInt32, count: math.MinInt32, pct: math.MinInt32, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Required(tc.n, tc.count, tc.pct); got != tc.want {
				t.Errorf("Required(%d, %d, %d) = %d, want %d", tc.n, tc.count, tc.pct, got, tc.want)
			}
		})
	}
}

// classes lists SlotClass for slots 1..n.
func classes(n, count, pct int32) []Class {
	var out []Class
	for i := int32(1); i <= n; i++ {
		out = append(out, SlotClass(i, count, pct))
	}
	return out
}

func TestSlotClass(t *testing.T) {
	const O, S = OnDemand, Spot
	tests := []struct {
		name       string
		count, pct int32
		want       []Class
	}{
		// Slot 10 is spot: Required(9) = ceil(2.7) = 3 = Required(10).
		{name: "30%: slots 1, 4, 7, 11, 14", pct: 30, want: []Class{O, S, S, O, S, S, O, S, S, S, O, S, S, O, S}},
		{name: "count 2 only", count: 2, want: []Class{O, O, S, S, S}},
		{name: "count 2 and 50%", count: 2, pct: 50, want: []Class{O, O, S, S, O, S, O}},
		{name: "nothing required", want: []Class{S, S, S}},
		{name: "100%", pct: 100, want: []Class{O, O, O}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, classes(int32(len(tc.want)), tc.count, tc.pct)); diff != "" {
				t.Errorf("classes of slots 1..%d (-want +got):\n%s", len(tc.want), diff)
			}
		})
	}
	for _, slot := range []int32{0, -1, math.MinInt32} {
		if got := SlotClass(slot, 5, 100); got != Spot {
			t.Errorf("SlotClass(%d) = %q, want %q: not a slot", slot, got, Spot)
		}
	}
}

// checkPrefix asserts the prefix property for slots 1..n: Required never
// falls nor rises by more than one, and slots 1..i hold exactly
// Required(i) on-demand slots for every i <= n.
func checkPrefix(t *testing.T, n, count, pct int32) {
	t.Helper()
	onDemand := int32(0)
	for i := int32(1); i <= n; i++ {
		prev, cur := Required(i-1, count, pct), Required(i, count, pct)
		if cur < prev || cur > prev+1 || cur > i {
			t.Fatalf("count %d pct %d: Required(%d) = %d after Required(%d) = %d", count, pct, i, cur, i-1, prev)
		}
		if SlotClass(i, count, pct) == OnDemand {
			onDemand++
		}
		if onDemand != cur {
			t.Fatalf("count %d pct %d: slots 1..%d hold %d on-demand, Required = %d", count, pct, i, onDemand, cur)
		}
	}
}

func TestPrefix(t *testing.T) {
	tests := []struct{ n, count, pct int32 }{
		{n: 100, pct: 30},
		{n: 100, pct: 33},
		{n: 100, pct: 1},
		{n: 100, pct: 99},
		{n: 100, count: 7, pct: 10},
		{n: 100, count: 150},
		{n: 100, count: -4, pct: -7},
		{n: 100, pct: 250},
		{n: 1000, count: 3, pct: 67},
	}
	for _, tc := range tests {
		checkPrefix(t, tc.n, tc.count, tc.pct)
	}
}

// FuzzPrefix checks the prefix property for any count and percent, the
// absurd ones included; its seeds run with every go test.
func FuzzPrefix(f *testing.F) {
	f.Add(int32(0), int32(30), uint16(50))
	f.Add(int32(2), int32(50), uint16(9))
	f.Add(int32(5), int32(0), uint16(3))
	f.Add(int32(0), int32(33), uint16(4000))
	f.Add(int32(math.MaxInt32), int32(math.MaxInt32), uint16(20))
	f.Add(int32(math.MinInt32), int32(math.MinInt32), uint16(20))
	f.Add(int32(-1), int32(101), uint16(20))
	f.Fuzz(func(t *testing.T, count, pct int32, n uint16) {
		checkPrefix(t, int32(n%5000), count, pct)
	})
}

func TestLowestFreeSlot(t *testing.T) {
	big := map[int32]bool{}
	for i := int32(1); i <= 200000; i++ {
		if i != 150000 {
			big[i] = true
		}
	}
	tests := []struct {
		name  string
		taken map[int32]bool
		want  int32
	}{
		{name: "none taken", want: 1},
		{name: "a gap", taken: map[int32]bool{1: true, 2: true, 4: true}, want: 3},
		{name: "no gap", taken: map[int32]bool{1: true, 2: true, 3: true}, want: 4},
		{name: "slot 1 free", taken: map[int32]bool{2: true, 3: true}, want: 1},
		{name: "slots below 1 do not count", taken: map[int32]bool{0: true, -1: true}, want: 1},
		{name: "large set with one gap", taken: big, want: 150000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			got := LowestFreeSlot(func(s int32) bool { calls++; return tc.taken[s] })
			if got != tc.want {
				t.Errorf("LowestFreeSlot = %d, want %d", got, tc.want)
			}
			if calls != int(tc.want) {
				t.Errorf("taken called %d times, want %d", calls, tc.want)
			}
		})
	}
	if got := LowestFreeSlot(func(int32) bool { return true }); got != 0 {
		t.Errorf("every slot taken: LowestFreeSlot = %d, want 0", got)
	}
}

func TestDeletionCost(t *testing.T) {
	tests := []struct {
		slot int32
		want string
	}{
		{slot: 1, want: "-1"},
		{slot: 42, want: "-42"},
		{slot: math.MaxInt32, want: "-2147483647"},
		{slot: 0, want: "0"},
		{slot: math.MinInt32, want: "0"},
	}
	for _, tc := range tests {
		got := DeletionCost(tc.slot)
		if got != tc.want {
			t.Errorf("DeletionCost(%d) = %q, want %q", tc.slot, got, tc.want)
		}
		// The ReplicaSet controller and the API server parse it as int32.
		if _, err := strconv.ParseInt(got, 10, 32); err != nil {
			t.Errorf("DeletionCost(%d) = %q is not an int32: %v", tc.slot, got, err)
		}
	}
	// A lower cost is deleted first, so a higher slot must cost less.
	lo, _ := strconv.Atoi(DeletionCost(3))
	hi, _ := strconv.Atoi(DeletionCost(4))
	if hi >= lo {
		t.Errorf("slot 4 costs %d, slot 3 %d: slot 4 must go first", hi, lo)
	}
}
