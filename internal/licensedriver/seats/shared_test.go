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
	"github.com/google/go-cmp/cmp"
	"testing"
	"time"
)

func TestComputeShared(t *testing.T) {
	tests := []struct {
		name         string
		pool         Pool
		wantCapacity int64
		wantWhy      string
		wantSeats    []string // PerSeat devices still held, published after it
		wantCounts   [4]int   // allocated, external, free, blocked
	}{
		{name: "all free", pool: Pool{Known: true, Total: 10}, wantCapacity: 10, wantCounts: [4]int{0, 0, 10, 0}},
		{
			name:         "settled holders' checkouts are the cluster's",
			pool:         Pool{Known: true, Total: 10, InUse: 5, Held: allocated(time.Hour, SharedDevice, SharedDevice, SharedDevice)},
			wantCapacity: 8, // 2 elsewhere
			wantCounts:   [4]int{3, 2, 5, 0},
		},
		{
			name:         "a holder inside the settle window: its checkout counts as external",
			pool:         Pool{Known: true, Total: 4, InUse: 1, Held: allocated(time.Second, SharedDevice)},
			wantCapacity: 3,
			wantCounts:   [4]int{1, 1, 2, 0},
		},
		{
			name:         "in use elsewhere beyond what is free: capacity under what is held, nothing free",
			pool:         Pool{Known: true, Total: 4, InUse: 6, Held: allocated(time.Hour, SharedDevice, SharedDevice)},
			wantCapacity: 0,
			wantWhy:      InUseElsewhere,
			wantCounts:   [4]int{2, 4, 0, 1},
		},
		{
			name:         "seats held on PerSeat devices after a switch lower the capacity",
			pool:         Pool{Known: true, Total: 5, Held: allocated(time.Hour, "seat-3", "seat-0", SharedDevice)},
			wantCapacity: 3,
			wantSeats:    []string{"seat-0", "seat-3"},
			wantCounts:   [4]int{3, 0, 2, 0},
		},
		{
			name:         "a claim of 3 seats of its capacity counts 3, and its 3 checkouts are the cluster's",
			pool:         Pool{Known: true, Total: 10, InUse: 4, Held: []Hold{{Device: SharedDevice, Since: now.Add(-time.Hour), Seats: 3}}},
			wantCapacity: 9, // 1 elsewhere
			wantCounts:   [4]int{3, 1, 6, 0},
		},
		{
			name:         "unknown: capacity is what is held, tainted",
			pool:         Pool{Known: false, Total: 5, Held: allocated(time.Hour, SharedDevice)},
			wantCapacity: 1,
			wantWhy:      SourceStale,
			wantCounts:   [4]int{1, 0, 0, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.pool.Name, tt.pool.Feature = "matlab", "MATLAB"
			p := ComputeShared(tt.pool, now, settle)
			var seatsHeld []string
			for _, d := range p.Devices[1:] {
				if got := state(d); got != Allocated {
					t.Errorf("held seat %s is %q, want %q", d.Name, got, Allocated)
				}
				seatsHeld = append(seatsHeld, d.Name)
			}
			if diff := cmp.Diff(tt.wantSeats, seatsHeld); diff != "" {
				t.Errorf("seats published after the shared device (-want +got):\n%s", diff)
			}
			d := p.Devices[0]
			if d.Name != SharedDevice || d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations {
				t.Errorf("device %s, allowMultipleAllocations %v", d.Name, d.AllowMultipleAllocations)
			}
			c := d.Capacity[SeatsCapacity]
			if got := c.Value.Value(); got != tt.wantCapacity {
				t.Errorf("capacity %d, want %d", got, tt.wantCapacity)
			}
			if p := c.RequestPolicy; tt.wantCapacity >= 2 && (p == nil || p.Default.Value() != 1 || p.ValidRange == nil || p.ValidRange.Min.Value() != 1 || p.ValidRange.Step.Value() != 1 || p.ValidRange.Max != nil) {
				t.Errorf("request policy %+v, want one seat by default, whole seats on request", c.RequestPolicy)
			}
			if got := state(d); got != tt.wantWhy {
				t.Errorf("device is %q, want %q", got, tt.wantWhy)
			}
			if got := [4]int{p.Allocated, p.External, p.Free, p.Blocked}; got != tt.wantCounts {
				t.Errorf("allocated, external, free, blocked = %v, want %v", got, tt.wantCounts)
			}
			if *d.Attributes[HeldAttribute].IntValue != int64(tt.wantCounts[0]) {
				t.Errorf("held attribute %d, want %d", *d.Attributes[HeldAttribute].IntValue, tt.wantCounts[0])
			}
			if *d.Attributes[PoolAttribute].StringValue != "matlab" || *d.Attributes[FeatureAttribute].StringValue != "MATLAB" {
				t.Errorf("attributes %v", d.Attributes)
			}
		})
	}
}

// TestModeSwitchKeepsHeldDevices: a switch of devices between PerSeat and
// Shared leaves every device a claim holds published, not offered, and
// counts its seats.
func TestModeSwitchKeepsHeldDevices(t *testing.T) {
	held := []Hold{
		{Device: "seat-1", Since: now.Add(-time.Hour)},
		{Device: SharedDevice, Since: now.Add(-time.Hour), Seats: 2},
	}
	for name, compute := range map[string]func(Pool, time.Time, time.Duration) Plan{"PerSeat": Compute, "Shared": ComputeShared} {
		t.Run(name, func(t *testing.T) {
			p := compute(Pool{Name: "cad", Feature: "CAD", Known: true, Total: 5, Held: held}, now, settle)
			published := map[string]string{}
			for _, d := range p.Devices {
				published[d.Name] = state(d)
			}
			for _, h := range held {
				why, ok := published[h.Device]
				if !ok {
					t.Errorf("held device %s withdrawn; published %v", h.Device, published)
					continue
				}
				if h.Device != SharedDevice || name == "PerSeat" {
					if why != Allocated {
						t.Errorf("held device %s is %q, want %q", h.Device, why, Allocated)
					}
				}
			}
			// 5 issued, 3 held: 2 free.
			if p.Allocated != 3 || p.Free != 2 {
				t.Errorf("allocated %d, free %d; want 3 and 2 (%s)", p.Allocated, p.Free, p)
			}
		})
	}
}
