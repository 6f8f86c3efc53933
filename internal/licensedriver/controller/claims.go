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
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

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
	byClaim map[types.UID]claimHolds
	now     func() time.Time
}

// claimHolds are one claim's devices of the driver and the pods it is
// reserved for.
type claimHolds struct {
	namespace, name string
	// pods are the names of the pods the claim is reserved for, all in the
	// claim's namespace: the host names their checkouts show on the
	// license server.
	pods    []string
	devices []held
}

type held struct {
	pool, device string
	since        time.Time
	seats        int
	// shared is true for an allocation of a device that several claims
	// may hold (its result has a share ID).
	shared bool
}

func newAllocations(now func() time.Time) *allocations {
	return &allocations{byClaim: map[types.UID]claimHolds{}, now: now}
}

// set records claim's allocation, or its release when it has none.
func (a *allocations) set(claim *resourceapi.ResourceClaim) {
	c := claimHolds{namespace: claim.Namespace, name: claim.Name}
	if alloc := claim.Status.Allocation; alloc != nil {
		for _, r := range claim.Status.ReservedFor {
			if r.Resource == "pods" && r.APIGroup == "" {
				c.pods = append(c.pods, r.Name)
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
				c.devices = append(c.devices, held{pool: r.Pool, device: r.Device, since: since, seats: n, shared: r.ShareID != nil})
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(c.devices) == 0 {
		delete(a.byClaim, claim.UID)
		return
	}
	if old, ok := a.byClaim[claim.UID]; ok && sameDevices(old.devices, c.devices) {
		c.devices = old.devices // keep the first-seen times
	}
	a.byClaim[claim.UID] = c
}

func (a *allocations) remove(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byClaim, uid)
}

// poolClaim is what one claim holds of one pool: its seats and its pods.
type poolClaim struct {
	namespace string
	pods      []string
	seats     int
}

// snapshot is the claims' holds at one moment, by pool.
type snapshot struct {
	// holds has one entry per allocation result, so a shared device held
	// by 20 claims is 20 entries.
	holds map[string][]seats.Hold
	// claims are the claims that hold seats of the pool.
	claims map[string][]poolClaim
	// doubles are the pool's devices held by more than one claim without
	// sharing, by device: two schedulers allocated from one pool
	// (kubernetes/kubernetes#128980). The claims, as namespace/name.
	doubles map[string]map[string][]string
}

func (a *allocations) snapshot() snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := snapshot{holds: map[string][]seats.Hold{}, claims: map[string][]poolClaim{}, doubles: map[string]map[string][]string{}}
	// The first holder of each unshared device; names are made only for
	// a device held twice.
	first := map[[2]string]types.UID{}
	holders := map[[2]string][]string{}
	for uid, c := range a.byClaim {
		perPool := map[string]int{}
		for _, d := range c.devices {
			s.holds[d.pool] = append(s.holds[d.pool], seats.Hold{Device: d.device, Since: d.since, Seats: d.seats})
			perPool[d.pool] += d.seats
			if d.shared {
				continue
			}
			k := [2]string{d.pool, d.device}
			other, held := first[k]
			switch {
			case !held:
				first[k] = uid
			case len(holders[k]) == 0:
				o := a.byClaim[other]
				holders[k] = []string{o.namespace + "/" + o.name, c.namespace + "/" + c.name}
			default:
				holders[k] = append(holders[k], c.namespace+"/"+c.name)
			}
		}
		for pool, n := range perPool {
			s.claims[pool] = append(s.claims[pool], poolClaim{namespace: c.namespace, pods: c.pods, seats: n})
		}
	}
	for _, claims := range s.claims {
		// Checkouts go to claims in one order, whatever the map's.
		slices.SortFunc(claims, func(a, b poolClaim) int {
			return cmp.Or(strings.Compare(a.namespace, b.namespace), slices.Compare(a.pods, b.pods))
		})
	}
	for k, claims := range holders {
		slices.Sort(claims)
		if s.doubles[k[0]] == nil {
			s.doubles[k[0]] = map[string][]string{}
		}
		s.doubles[k[0]][k[1]] = claims
	}
	return s
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
