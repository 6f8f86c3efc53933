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
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
)

// allocations tracks the driver's devices that ResourceClaims hold, by pool,
// from the claim informer's events. It holds one entry per allocated device
// of the driver, so it is as large as the number of seats pods hold.
type allocations struct {
	mu sync.Mutex
	// byClaim holds each claim's devices of the driver, and when they were
	// first seen allocated: a claim's allocation does not change until it
	// is released.
	byClaim map[types.UID][]held
	now     func() time.Time
}

type held struct {
	pool, device string
	since        time.Time
	seats        int
	// pods are the names of the pods the claim is reserved for: the host
	// names their checkouts show on the license server.
	pods []string
}

func newAllocations(now func() time.Time) *allocations {
	return &allocations{byClaim: map[types.UID][]held{}, now: now}
}

// set records claim's allocation, or its release when it has none.
func (a *allocations) set(claim *resourceapi.ResourceClaim) {
	var devices []held
	if alloc := claim.Status.Allocation; alloc != nil {
		var pods []string
		for _, r := range claim.Status.ReservedFor {
			if r.Resource == "pods" && r.APIGroup == "" {
				pods = append(pods, r.Name)
			}
		}
		since := a.now()
		if alloc.AllocationTimestamp != nil && alloc.AllocationTimestamp.Time.Before(since) {
			since = alloc.AllocationTimestamp.Time
		}
		for _, r := range alloc.Devices.Results {
			if r.Driver == licensedriver.DriverName {
				n := 1
				if q, ok := r.ConsumedCapacity[seats.SeatsCapacity]; ok && q.Value() > 1 {
					n = int(min(q.Value(), 1<<31-1))
				}
				devices = append(devices, held{pool: r.Pool, device: r.Device, since: since, seats: n, pods: pods})
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(devices) == 0 {
		delete(a.byClaim, claim.UID)
		return
	}
	if old, ok := a.byClaim[claim.UID]; ok && sameDevices(old, devices) {
		for i := range old {
			old[i].pods = devices[i].pods // reservations change, the allocation does not
		}
		return // keep the first-seen times
	}
	a.byClaim[claim.UID] = devices
}

func (a *allocations) remove(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byClaim, uid)
}

// byPool returns, per pool, every allocation the claims hold: one entry per
// allocation result, so a shared device held by 20 claims is 20 entries.
func (a *allocations) byPool() map[string][]seats.Hold {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]seats.Hold{}
	for _, devices := range a.byClaim {
		for _, d := range devices {
			out[d.pool] = append(out[d.pool], seats.Hold{Device: d.device, Since: d.since, Seats: d.seats})
		}
	}
	return out
}

// podsByPool returns, per pool, the names of the pods its claims are
// reserved for.
func (a *allocations) podsByPool() map[string]sets.Set[string] {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]sets.Set[string]{}
	for _, devices := range a.byClaim {
		for _, d := range devices {
			if out[d.pool] == nil {
				out[d.pool] = sets.New[string]()
			}
			out[d.pool].Insert(d.pods...)
		}
	}
	return out
}

func sameDevices(a, b []held) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].pool != b[i].pool || a[i].device != b[i].device || a[i].seats != b[i].seats {
			return false
		}
	}
	return true
}
