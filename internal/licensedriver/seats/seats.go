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
// allocated into the devices of a feature's pool: one device per seat (or one
// shared device, shared.go), and on each device whether a new claim may take
// it.
//
// The invariant, at every moment the scheduler can allocate: allocated +
// external <= total, where external are the seats checked out outside the
// cluster. Three choices make it hold without ever disturbing a running pod:
//
//   - Unavailable seats are published unoffered, not tainted and not
//     withdrawn: the boolean attribute "offered" is false and "unavailable"
//     says why. The feature's DeviceClass selects offered devices only, and a
//     claim cannot name a device without a class nor drop its class's
//     selectors. A device taint would not do: a claim's request may tolerate
//     any taint, and every namespace user may write claims. The pool's
//     devices keep their names, so an allocated device never vanishes from
//     the slices the scheduler and the kubelet read.
//   - Allocated seats are unoffered too. Their pod keeps them (selectors are
//     checked only when allocating), but when the pod ends and its claim is
//     released, the seat stays unallocatable until the next plan has counted
//     it: a release can never open more seats than the plan allows.
//   - The scheduler's allocator takes the first matching device in slice
//     and device order, so the free seats are the first unallocated ones.
//     An outside checkout the driver has not read yet can still meet a
//     claim allocated in the same moment: the license server then refuses
//     the later checkout; the driver cannot know of a checkout before it
//     reads the server.
//
// Seats the cluster's own pods have checked out are not external: the
// server counts them in use, and their devices are allocated. When the
// server lists its checkouts by host, the controller attributes them to the
// pods that hold seats (Pool.ClusterCheckouts). Otherwise a pod that was
// given a seat may not have checked it out yet, so only allocations older
// than the settle window are subtracted from the server's in-use count;
// younger ones are assumed not to be in it yet. Inside the window that errs
// towards fewer free seats. Past it, a pod that still has not checked out
// (or never does) is taken to hold a seat the server counts, so an outside
// checkout can be missed and one seat more offered per such pod: the
// license server then refuses the extra checkout. Set the window longer than
// the slowest start to checkout.
package seats

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"
)

// Why a seat is not offered: the value of its UnavailableAttribute.
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
	// NotReported: the server does not report the feature.
	NotReported = "NotReported"
	// OverLimit: the server reports more seats than the driver publishes
	// (the configuration's maxSeats); the feature fails closed.
	OverLimit = "OverLimit"
)

// Device attributes, in the driver's domain.
const (
	// PoolAttribute holds the pool's name: DeviceClass selectors match on it.
	PoolAttribute resourceapi.QualifiedName = "pool"
	// FeatureAttribute holds the feature's name on the license server.
	FeatureAttribute resourceapi.QualifiedName = "feature"
	// OfferedAttribute is true on the devices a new claim may take; the
	// DeviceClass selects only those.
	OfferedAttribute resourceapi.QualifiedName = "offered"
	// UnavailableAttribute, on a device that is not offered, says why.
	UnavailableAttribute resourceapi.QualifiedName = "unavailable"
)

// Offered reports whether a new claim may take d.
func Offered(d resourceapi.Device) bool {
	a, ok := d.Attributes[OfferedAttribute]
	return ok && a.BoolValue != nil && *a.BoolValue
}

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
	// Why, when not Known, says why (SourceStale when empty).
	Why string
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
	// unallocated devices that are not offered.
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

// Compute plans the pool's devices at now: a device per seat issued (none
// when the count is unknown), and every device a claim holds.
func Compute(p Pool, now time.Time, settle time.Duration) Plan {
	n := 0
	if p.Known {
		n = p.Total
	}
	// An allocated device stays published whatever the server says, so
	// that the pod holding it is never without it; past the seats issued,
	// only the allocated devices are published.
	allocated := make(map[string]bool, len(p.Held))
	var past []int
	shared := 0
	for _, h := range p.Held {
		if i, ok := deviceIndex(h.Device); ok && i >= n && !allocated[h.Device] {
			past = append(past, i)
		}
		allocated[h.Device] = true
		if h.Device == SharedDevice {
			shared += h.seats()
		}
	}
	slices.Sort(past)
	// Holds of a device that is not a seat (the shared device, after a
	// switch to PerSeat) still take seats.
	held, settled := count(p.Held, now, settle)
	plan := Plan{Allocated: held}
	free := 0
	why := p.why()
	if p.Known {
		plan.External = p.external(settled)
		free = max(0, p.Total-plan.External-plan.Allocated)
		why = InUseElsewhere
		if plan.External == 0 {
			// Pods hold seats on devices past the total.
			why = NotIssued
		}
	}
	attrs := attributeSets(p)
	plan.Devices = make([]resourceapi.Device, 0, n+len(past)+1)
	for i := range n {
		name := DeviceName(i)
		d := resourceapi.Device{Name: name}
		switch {
		case allocated[name]:
			d.Attributes = attrs(Allocated)
		case free > 0:
			free--
			plan.Free++
			d.Attributes = attrs("")
		default:
			d.Attributes = attrs(why)
			plan.Blocked++
		}
		plan.Devices = append(plan.Devices, d)
	}
	for _, i := range past {
		plan.Devices = append(plan.Devices, resourceapi.Device{Name: DeviceName(i), Attributes: attrs(Allocated)})
	}
	if allocated[SharedDevice] {
		// Held since before a switch to PerSeat: it stays while claims hold
		// it, and takes no new claim.
		plan.Devices = append(plan.Devices, sharedDevice(p, shared, held, Allocated))
	}
	return plan
}

// why is the reason an unknown pool's devices are not offered.
func (p Pool) why() string {
	if p.Why != "" {
		return p.Why
	}
	return SourceStale
}

// attributeSets returns the attributes of the pool's devices, one map per
// reason a device is not offered ("" for an offered device), each made once:
// shared, they cost a 10,000-seat plan a fifth of the memory (the publisher
// deep-copies what it is given, so nothing is shared with the API objects).
func attributeSets(p Pool) func(why string) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	made := map[string]map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}
	return func(why string) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
		m, ok := made[why]
		if !ok {
			m = attributes(p, why)
			made[why] = m
		}
		return m
	}
}

// attributes are a device's attributes: not offered when why is not "".
func attributes(p Pool, why string) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	m := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		FeatureAttribute: {StringValue: ptr.To(p.Feature)},
		PoolAttribute:    {StringValue: ptr.To(p.Name)},
		OfferedAttribute: {BoolValue: ptr.To(why == "")},
	}
	if why != "" {
		m[UnavailableAttribute] = resourceapi.DeviceAttribute{StringValue: ptr.To(why)}
	}
	return m
}

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
