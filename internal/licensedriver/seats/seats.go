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

// Package seats turns what the license server says and what the cluster has
// allocated into the devices of a feature's pool: one device per seat, and a
// NoSchedule device taint on the seats no new pod may take.
//
// The invariant, at every moment the scheduler can allocate: allocated +
// external <= total, where external are the seats checked out outside the
// cluster. Two choices make it hold without ever disturbing a running pod:
//
//   - Unavailable seats are tainted, not withdrawn. A taint with effect
//     NoSchedule stops new allocations and leaves existing ones alone (the
//     eviction effect, NoExecute, is never used), and the pool's devices keep
//     their names, so an allocated device never vanishes from the slices the
//     scheduler and the kubelet read. `kubectl get resourceslices -o yaml`
//     shows why each seat is unavailable.
//   - Allocated seats are tainted too. The taint does not touch the pod
//     that holds the seat (NoSchedule is checked only when allocating), but
//     when that pod ends and its claim is released, the seat stays
//     unallocatable until the next plan has counted it: a release can
//     never open more seats than the plan allows.
//   - The scheduler's allocator takes the first free device in slice and
//     device order, so the free seats are the first unallocated ones and
//     the taints go on the last: a taint then rarely lands on the device the
//     scheduler is taking at the same moment. When it does, the claim still
//     gets the device (the taint was not there when it allocated) and the
//     next plan moves the taint to another free seat; the pool is one seat
//     over for that reconcile, never more, and the license server itself
//     refuses the checkout of a seat that is not there.
//
// Seats the cluster's own pods have checked out are not external: the
// server counts them in use, and their devices are allocated. A pod that
// was given a seat may not have checked it out yet, so only allocations
// older than the settle window are subtracted from the server's in-use
// count; younger ones are assumed not to be in it yet. Inside the window
// that errs towards fewer free seats. Past it, a pod that still has not
// checked out (or never does) is taken to hold a seat the server counts,
// so an outside checkout can be missed and one seat more offered per such
// pod: the license server then refuses the extra checkout. Set the window
// longer than the slowest start to checkout.
package seats

import (
	"fmt"
	"strconv"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
)

// TaintKey is the key of the taint on an unavailable seat; its value says why.
const TaintKey = licensedriver.DriverName + "/unavailable"

// Why a seat is unavailable: the taint's value.
const (
	// InUseElsewhere: checked out outside the cluster.
	InUseElsewhere = "InUseElsewhere"
	// SourceStale: the license server has not answered for staleAfter and
	// onStale is FailClosed, or it has never answered.
	SourceStale = "SourceStale"
	// NotIssued: the server issues fewer seats than the pool has devices;
	// the device stays while a pod holds it.
	NotIssued = "NotIssued"
	// Allocated: held by a pod's claim (see the package comment).
	Allocated = "Allocated"
)

// Device attributes, in the driver's domain.
const (
	// PoolAttribute holds the pool's name: DeviceClass selectors match on it.
	PoolAttribute resourceapi.QualifiedName = "pool"
	// FeatureAttribute holds the feature's name on the license server.
	FeatureAttribute resourceapi.QualifiedName = "feature"
)

// Pool is what is known of one feature's seats.
type Pool struct {
	// Name is the pool's name, Feature the feature's on the license server.
	Name, Feature string
	// Total is the number of seats issued; InUse the number checked out,
	// by anyone. Meaningful only when Known.
	Total, InUse int
	// Known is false when the server has not reported the feature, or its
	// reading is stale and the policy is to fail closed.
	Known bool
	// Held are the pool's allocations, one per seat a claim holds.
	Held []Hold
	// ClusterCheckouts, when the server lists its checkouts, is how many
	// of InUse are checked out by the pods that hold the pool's seats (by
	// host name): then External is InUse less those, exactly, and the
	// settle window is not needed. Nil: estimate with the settle window.
	ClusterCheckouts *int
}

// external is the number of seats checked out outside the cluster: InUse
// less the cluster's checkouts when the server lists them, else less the
// seats held longer than the settle window.
func (p Pool) external(settled int) int {
	if p.ClusterCheckouts != nil {
		return max(0, p.InUse-*p.ClusterCheckouts)
	}
	return max(0, p.InUse-settled)
}

// Hold is one allocation of a device to a claim: the device, since when it
// was allocated (or first seen allocated), and how many seats it takes (1
// but for a shared device's capacity requests; 0 counts as 1).
type Hold struct {
	Device string
	Since  time.Time
	Seats  int
}

func (h Hold) seats() int { return max(1, h.Seats) }

// count sums the seats of held, and of those older than the settle window.
func count(held []Hold, now time.Time, settle time.Duration) (all, settled int) {
	for _, h := range held {
		all += h.seats()
		if !h.Since.After(now.Add(-settle)) {
			settled += h.seats()
		}
	}
	return all, settled
}

// Plan is the pool's devices and the counts they were made from.
type Plan struct {
	Devices []resourceapi.Device
	// Allocated, External and Free count seats; Blocked is the number of
	// unallocated devices that are tainted.
	Allocated, External, Free, Blocked int
}

// DeviceName is the name of the pool's i-th seat.
func DeviceName(i int) string { return "seat-" + strconv.Itoa(i) }

// deviceIndex is the inverse of DeviceName; ok is false for a name the
// driver does not make.
func deviceIndex(name string) (int, bool) {
	const prefix = "seat-"
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return 0, false
	}
	i, err := strconv.Atoi(name[len(prefix):])
	if err != nil || i < 0 || DeviceName(i) != name {
		return 0, false
	}
	return i, true
}

// Compute plans the pool's devices at now.
func Compute(p Pool, now time.Time, settle time.Duration) Plan {
	n := p.Total
	if !p.Known {
		n = 0
	}
	// An allocated device stays published whatever the server says, so
	// that the pod holding it is never without it.
	allocated := make(map[string]bool, len(p.Held))
	for _, h := range p.Held {
		allocated[h.Device] = true
		if i, ok := deviceIndex(h.Device); ok && i >= n {
			n = i + 1
		}
	}
	// Holds of a device that is not a seat (the shared device, after a
	// switch to PerSeat) still take seats.
	held, settled := count(p.Held, now, settle)
	plan := Plan{Allocated: held}
	free := 0
	why := SourceStale
	if p.Known {
		plan.External = p.external(settled)
		free = max(0, p.Total-plan.External-plan.Allocated)
		why = InUseElsewhere
		if plan.External == 0 {
			// Pods hold seats on devices past the total.
			why = NotIssued
		}
	}
	// Every device has the same attributes, and one of four taint lists:
	// shared, they cost a 10,000-seat plan a fifth of the memory (the
	// publisher deep-copies what it is given, so nothing is shared with the
	// API objects).
	attributes := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		FeatureAttribute: {StringValue: ptr.To(p.Feature)},
		PoolAttribute:    {StringValue: ptr.To(p.Name)},
	}
	plan.Devices = make([]resourceapi.Device, n)
	for i := range n {
		name := DeviceName(i)
		d := resourceapi.Device{Name: name, Attributes: attributes}
		switch {
		case allocated[name]:
			d.Taints = taints[Allocated]
		case p.Known && i >= p.Total:
			d.Taints = taints[NotIssued]
			plan.Blocked++
		case free > 0:
			free--
			plan.Free++
		default:
			d.Taints = taints[why]
			plan.Blocked++
		}
		plan.Devices[i] = d
	}
	return plan
}

// taints are the taint lists a device can have, shared like the attributes.
var taints = func() map[string][]resourceapi.DeviceTaint {
	m := map[string][]resourceapi.DeviceTaint{}
	for _, why := range []string{InUseElsewhere, SourceStale, NotIssued, Allocated} {
		m[why] = []resourceapi.DeviceTaint{{Key: TaintKey, Value: why, Effect: resourceapi.DeviceTaintEffectNoSchedule}}
	}
	return m
}()

// Slices splits devices into ResourceSlices of at most
// ResourceSliceMaxDevices, in order, so that the first free seats come first
// to the allocator, which sorts slices by name and devices by position.
func Slices(devices []resourceapi.Device) []resourceslice.Slice {
	slices := []resourceslice.Slice{}
	for start := 0; start < len(devices); start += resourceapi.ResourceSliceMaxDevices {
		end := min(start+resourceapi.ResourceSliceMaxDevices, len(devices))
		slices = append(slices, resourceslice.Slice{Devices: devices[start:end]})
	}
	if len(slices) == 0 {
		// An empty pool is published as one empty slice: it says the driver
		// runs and the feature has no seats, not that the driver is gone.
		slices = append(slices, resourceslice.Slice{})
	}
	return slices
}

// String is a one-line summary, for logs and events.
func (p Plan) String() string {
	return fmt.Sprintf("%d seats: %d allocated, %d in use elsewhere, %d free, %d blocked", len(p.Devices), p.Allocated, p.External, p.Free, p.Blocked)
}
