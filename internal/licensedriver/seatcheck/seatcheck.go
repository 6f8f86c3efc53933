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

// Package seatcheck checks the license driver's one promise on the objects
// the API server holds, the same way in unit, property and integration
// tests: seats allocated to claims plus seats checked out outside the
// cluster never exceed the seats issued, so a pod that starts can check its
// license out.
//
// A Checker is given each state of the cluster in turn (the claims, the
// driver's ResourceSlices, and what the license server really has) and
// reports, for that state:
//
//   - a seat given while the pool is full: a claim allocated since the last
//     state, after which allocated + external > total. The total falling, or
//     an outside checkout, can leave a pool over without a new allocation:
//     that is the server's doing, not a seat the driver offered, and it is
//     not reported; no claim may be added until the pool is under again;
//   - a device held by two claims that do not share it (a share ID marks
//     an allocation of a device that several claims may hold);
//   - an allocated device missing from its pool's newest complete set of
//     slices: withdrawn while a pod holds it.
package seatcheck

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
)

// Truth is what the license server really has of one pool's feature.
type Truth struct {
	// Total is the number of seats issued; External the number checked out
	// outside the cluster (by hosts that are not the pods holding seats).
	Total, External int
}

// State is the cluster at one moment.
type State struct {
	// Claims are the ResourceClaims, in every namespace.
	Claims []*resourceapi.ResourceClaim
	// Slices are the driver's ResourceSlices.
	Slices []*resourceapi.ResourceSlice
	// Truth by pool. A pool without one is checked for devices held twice
	// and withdrawn only.
	Truth map[string]Truth
}

// Checker checks a sequence of states. The zero value is ready.
type Checker struct {
	seen map[allocation]bool
	// Peak is the most seats of each pool held at once.
	Peak map[string]int
}

type allocation struct {
	claim        types.UID
	pool, device string
}

// Check checks s, and remembers its allocations for the next state.
func (c *Checker) Check(s State) error {
	if c.Peak == nil {
		c.Peak = map[string]int{}
	}
	var errs []error
	held := map[string]int{}           // seats by pool
	fresh := map[string][]string{}     // claims allocated since the last state, by pool
	owners := map[[2]string][]string{} // unshared devices' claims
	now := map[allocation]bool{}
	for _, claim := range s.Claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.Driver != licensedriver.DriverName {
				continue
			}
			held[r.Pool] += Seats(r)
			a := allocation{claim.UID, r.Pool, r.Device}
			now[a] = true
			name := claim.Namespace + "/" + claim.Name
			if !c.seen[a] {
				fresh[r.Pool] = append(fresh[r.Pool], name+" ("+r.Device+")")
			}
			if r.ShareID == nil {
				k := [2]string{r.Pool, r.Device}
				owners[k] = append(owners[k], name)
			}
		}
	}
	for pool, n := range held {
		c.Peak[pool] = max(c.Peak[pool], n)
		t, ok := s.Truth[pool]
		if ok && len(fresh[pool]) > 0 && n+t.External > t.Total {
			errs = append(errs, fmt.Errorf("pool %s: %s given a seat while %d allocated + %d checked out elsewhere > %d issued",
				pool, strings.Join(fresh[pool], ", "), n, t.External, t.Total))
		}
	}
	for k, claims := range owners {
		if len(claims) > 1 {
			errs = append(errs, fmt.Errorf("pool %s: device %s held by %s", k[0], k[1], strings.Join(claims, " and ")))
		}
	}
	published := Published(s.Slices)
	for a := range now {
		p, ok := published[a.pool]
		if !ok || p.Complete && p.Devices[a.device].Name == "" {
			errs = append(errs, fmt.Errorf("pool %s: device %s is allocated but no longer published", a.pool, a.device))
		}
	}
	c.seen = now
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// Seats is the number of seats an allocation result holds: its consumed
// "seats" capacity on a shared device, else one.
func Seats(r resourceapi.DeviceRequestAllocationResult) int {
	if q, ok := r.ConsumedCapacity[seats.SeatsCapacity]; ok {
		return int(q.Value())
	}
	return 1
}

// PoolDevices are the devices of a pool's newest generation, by name, and
// whether all of that generation's slices are there.
type PoolDevices struct {
	Devices  map[string]resourceapi.Device
	Complete bool
}

// Published returns, by pool, the devices of the driver's pools' newest
// generations. A pool is replaced slice by slice; until its newest
// generation is complete the scheduler does not allocate from it.
func Published(list []*resourceapi.ResourceSlice) map[string]PoolDevices {
	newest := map[string]resourceapi.ResourcePool{}
	for _, s := range list {
		if s.Spec.Driver != licensedriver.DriverName {
			continue
		}
		if p, ok := newest[s.Spec.Pool.Name]; !ok || s.Spec.Pool.Generation > p.Generation {
			newest[s.Spec.Pool.Name] = s.Spec.Pool
		}
	}
	out := map[string]PoolDevices{}
	count := map[string]int64{}
	for _, s := range list {
		p, ok := newest[s.Spec.Pool.Name]
		if s.Spec.Driver != licensedriver.DriverName || !ok || s.Spec.Pool.Generation != p.Generation {
			continue
		}
		count[p.Name]++
		pd := out[p.Name]
		if pd.Devices == nil {
			pd.Devices = map[string]resourceapi.Device{}
		}
		for _, d := range s.Spec.Devices {
			pd.Devices[d.Name] = d
		}
		out[p.Name] = pd
	}
	for name, pd := range out {
		pd.Complete = count[name] == newest[name].ResourceSliceCount
		out[name] = pd
	}
	return out
}

// Free is the number of seats of pool a new claim can take in its newest
// generation: its offered devices that no claim holds, and the capacity of
// an offered shared device less what claims hold of it.
func Free(pool string, list []*resourceapi.ResourceSlice, claims []*resourceapi.ResourceClaim) int {
	held := map[string]int{}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver == licensedriver.DriverName && r.Pool == pool {
				held[r.Device] += Seats(r)
			}
		}
	}
	free := 0
	for _, d := range Published(list)[pool].Devices {
		switch {
		case !seats.Offered(d):
		case d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations:
			c := d.Capacity[seats.SeatsCapacity]
			free += max(0, int(c.Value.Value())-held[d.Name])
		case held[d.Name] == 0:
			free++
		}
	}
	return free
}
