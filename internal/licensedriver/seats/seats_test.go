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

package seats

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const settle = 2 * time.Minute

// states are the devices' reasons not to be offered, "" when offered; a
// device that is not the i-th seat is named.
func states(p Plan) []string {
	out := make([]string, len(p.Devices))
	for i, d := range p.Devices {
		out[i] = state(d)
		if d.Name != DeviceName(i) {
			out[i] = d.Name + " " + out[i]
		}
	}
	return out
}

// state is d's reason not to be offered, "" when offered, or what is wrong
// with its attributes.
func state(d resourceapi.Device) string {
	why := d.Attributes[UnavailableAttribute].StringValue
	switch {
	case len(d.Taints) > 0:
		return "tainted"
	case Offered(d) && why == nil:
		return ""
	case !Offered(d) && why != nil && *why != "":
		return *why
	default:
		return "inconsistent offered/unavailable"
	}
}

func allocated(age time.Duration, names ...string) []Hold {
	var held []Hold
	for _, n := range names {
		held = append(held, Hold{Device: n, Since: now.Add(-age)})
	}
	return held
}

func TestCompute(t *testing.T) {
	const (
		free  = ""
		alloc = Allocated
		else_ = InUseElsewhere
		stale = SourceStale
		gone  = NotIssued
	)
	tests := []struct {
		name       string
		pool       Pool
		want       []string
		wantCounts [4]int // allocated, external, free, blocked
	}{
		{
			name:       "all free",
			pool:       Pool{Known: true, Total: 3},
			want:       []string{free, free, free},
			wantCounts: [4]int{0, 0, 3, 0},
		},
		{
			name:       "checked out elsewhere: the last seats are not offered",
			pool:       Pool{Known: true, Total: 4, InUse: 2},
			want:       []string{free, free, else_, else_},
			wantCounts: [4]int{0, 2, 2, 2},
		},
		{
			name: "settled pods' checkouts are the cluster's, not external",
			pool: Pool{Known: true, Total: 4, InUse: 3, Held: allocated(time.Hour, "seat-0", "seat-1")},
			want: []string{alloc, alloc, free, else_},
			// in use 3, of which 2 settled pods: 1 external, 4-1-2 = 1 free
			wantCounts: [4]int{2, 1, 1, 1},
		},
		{
			name: "a pod inside its settle window may not have checked out: its checkout counts as external",
			pool: Pool{Known: true, Total: 4, InUse: 1, Held: allocated(time.Second, "seat-0")},
			want: []string{alloc, free, free, else_},
			// the server's 1 in use may be someone else: 1 external, 4-1-1 = 2 free
			wantCounts: [4]int{1, 1, 2, 1},
		},
		{
			name:       "the settle window's edge counts as settled",
			pool:       Pool{Known: true, Total: 2, InUse: 1, Held: allocated(settle, "seat-1")},
			want:       []string{free, alloc},
			wantCounts: [4]int{1, 0, 1, 0},
		},
		{
			name: "checkouts listed by host: the cluster's are known, no settle window needed",
			pool: Pool{Known: true, Total: 5, InUse: 3, Held: allocated(time.Second, "seat-0", "seat-1"), ClusterCheckouts: ptr.To(1)},
			// 3 in use, 1 by a pod (the other pod has not checked out):
			// 2 elsewhere, 5-2-2 = 1 free; the settle estimate would say 3
			// elsewhere and none free
			want:       []string{alloc, alloc, free, else_, else_},
			wantCounts: [4]int{2, 2, 1, 2},
		},
		{
			name:       "more in use elsewhere than issued: nothing free, pods keep their seats",
			pool:       Pool{Known: true, Total: 3, InUse: 9, Held: allocated(time.Hour, "seat-2")},
			want:       []string{else_, else_, alloc},
			wantCounts: [4]int{1, 8, 0, 2},
		},
		{
			name: "fewer seats issued: an allocated device past the total stays, unallocated ones go",
			pool: Pool{Known: true, Total: 2, Held: allocated(time.Hour, "seat-4")},
			// 2 issued, 1 held by the pod on seat-4: 1 free
			want:       []string{free, gone, "seat-4 " + alloc},
			wantCounts: [4]int{1, 0, 1, 1},
		},
		{
			name:       "unknown feature: only allocated devices, no new allocation",
			pool:       Pool{Known: false, Total: 5, Held: allocated(time.Hour, "seat-1")},
			want:       []string{"seat-1 " + alloc},
			wantCounts: [4]int{1, 0, 0, 0},
		},
		{
			name:       "unknown feature, nothing allocated: an empty pool",
			pool:       Pool{Known: false, Total: 5},
			want:       []string{},
			wantCounts: [4]int{0, 0, 0, 0},
		},
		{
			name:       "a claim on a device name the driver does not make counts, without a device",
			pool:       Pool{Known: true, Total: 2, Held: allocated(time.Hour, "gpu-0")},
			want:       []string{free, gone},
			wantCounts: [4]int{1, 0, 1, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.pool.Feature = "MATLAB"
			p := Compute(tt.pool, now, settle)
			if diff := cmp.Diff(tt.want, states(p)); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
			got := [4]int{p.Allocated, p.External, p.Free, p.Blocked}
			if got != tt.wantCounts {
				t.Errorf("allocated, external, free, blocked = %v, want %v (%s)", got, tt.wantCounts, p)
			}
		})
	}
}

// TestComputeInvariant: for random pools, the seats a new pod can take never
// exceed what the server has left, and every allocated seat is published.
func TestComputeInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p := Pool{Feature: "f", Known: r.IntN(10) > 0, Total: r.IntN(40), InUse: r.IntN(50)}
		seen := map[string]bool{}
		for range r.IntN(45) {
			if d := DeviceName(r.IntN(60)); !seen[d] {
				seen[d] = true
				p.Held = append(p.Held, Hold{Device: d, Since: now.Add(-time.Duration(r.IntN(300)) * time.Second)})
			}
		}
		plan := Compute(p, now, settle)
		free := 0
		byName := map[string]resourceapi.Device{}
		for _, d := range plan.Devices {
			byName[d.Name] = d
			if Offered(d) {
				free++
			}
		}
		if free != plan.Free {
			t.Fatalf("%+v: %d offered devices, plan says %d free", p, free, plan.Free)
		}
		_, settled := count(p.Held, now, settle)
		// The true external count is at least InUse minus every seat the
		// settled pods hold.
		if p.Known && free+len(p.Held)+max(0, p.InUse-settled) > max(p.Total, len(p.Held)+max(0, p.InUse-settled)) {
			t.Fatalf("%+v: %d free + %d allocated + %d external > total %d", p, free, len(p.Held), p.InUse-settled, p.Total)
		}
		if !p.Known && free != 0 {
			t.Fatalf("%+v: %d free seats with no reading", p, free)
		}
		for _, h := range p.Held {
			name := h.Device
			d, ok := byName[name]
			if !ok {
				t.Fatalf("%+v: allocated %s not published", p, name)
			}
			if got := state(d); got != Allocated {
				t.Fatalf("%+v: allocated %s is %q, want not offered, %s", p, name, got, Allocated)
			}
		}
	}
}

func TestSlices(t *testing.T) {
	for _, n := range []int{0, 1, 128, 129, 10000} {
		plan := Compute(Pool{Name: "f", Feature: "F", Known: true, Total: n}, now, settle)
		slices := Slices(plan.Devices)
		want := max(1, (n+127)/128)
		if len(slices) != want {
			t.Errorf("%d seats: %d slices, want %d", n, len(slices), want)
		}
		i := 0
		for _, s := range slices {
			if len(s.Devices) > resourceapi.ResourceSliceMaxDevices {
				t.Errorf("%d seats: a slice of %d devices", n, len(s.Devices))
			}
			for _, d := range s.Devices {
				if d.Name != DeviceName(i) || *d.Attributes[PoolAttribute].StringValue != "f" {
					t.Fatalf("%d seats: device %d is %s, pool %v", n, i, d.Name, d.Attributes[PoolAttribute])
				}
				i++
			}
		}
		if i != n {
			t.Errorf("%d seats: %d devices in slices", n, i)
		}
	}
}

func TestDeviceIndex(t *testing.T) {
	for name, want := range map[string]int{"seat-0": 0, "seat-17": 17, "seat-": -1, "seat-01": -1, "seat--1": -1, "gpu-0": -1, "seat-x": -1, "": -1} {
		i, ok := deviceIndex(name)
		if (want >= 0) != ok || (ok && i != want) {
			t.Errorf("deviceIndex(%q) = %d, %t; want %d", name, i, ok, want)
		}
	}
}
