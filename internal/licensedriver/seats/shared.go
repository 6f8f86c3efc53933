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
	"maps"
	"slices"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// SharedDevice is the name of a feature's one device in shared mode, and
// SeatsCapacity the capacity its claims consume, one seat each.
const (
	SharedDevice                            = "seats"
	SeatsCapacity resourceapi.QualifiedName = "seats"
	// HeldAttribute is the number of seats the device's claims hold. It
	// changes the slice at every allocation and release, as the taints of
	// PerSeat do: without that, a pod that waits for a seat may not be
	// retried when one is released (seen in 1 of 4 runs: a freed seat
	// stayed unused until the scheduler's 5-minute flush).
	HeldAttribute resourceapi.QualifiedName = "held"
)

// ComputeShared plans the pool as one device that its claims share (DRA
// consumable capacity): its "seats" capacity is the number of seats the
// cluster may hold, total - external, and each allocation consumes one.
// Holds of other devices (seats of PerSeat mode, after a switch to Shared)
// lower the capacity by as many seats, and those devices stay published,
// not offered, while claims hold them.
//
// One device instead of one per seat is what keeps scheduling fast: the
// scheduler's DRA Filter reads every device of an allNodes pool for every
// node it filters, so its cost grows with nodes x seats (see
// doc/performance.md). The allocator itself keeps consumed + new <=
// capacity; a capacity lowered below what is held leaves the holders
// alone and admits no one until enough are released.
func ComputeShared(p Pool, now time.Time, settle time.Duration) Plan {
	held, settled := count(p.Held, now, settle)
	plan := Plan{Allocated: held}
	shared := 0
	seatsHeld := map[int]bool{}
	for _, h := range p.Held {
		if h.Device == SharedDevice {
			shared += h.seats()
		} else if i, ok := deviceIndex(h.Device); ok {
			seatsHeld[i] = true
		}
	}
	capacity := shared
	why := p.why()
	if p.Known {
		plan.External = p.external(settled)
		capacity = max(0, p.Total-plan.External-(held-shared))
		plan.Free = max(0, capacity-shared)
		why = ""
		if plan.Free == 0 {
			why = Allocated
			if plan.External > 0 {
				why = InUseElsewhere
			}
		}
	}
	if why != "" {
		plan.Blocked = 1
	}
	plan.Devices = []resourceapi.Device{sharedDevice(p, capacity, held, why)}
	// Seats held since before a switch to Shared, in index order.
	attrs := attributeSets(p)
	for _, i := range slices.Sorted(maps.Keys(seatsHeld)) {
		plan.Devices = append(plan.Devices, resourceapi.Device{Name: DeviceName(i), Attributes: attrs(Allocated)})
	}
	return plan
}

// sharedDevice is the pool's shared device with the given capacity: offered
// when why is "". held is the number of seats the pool's claims hold.
func sharedDevice(p Pool, capacity, held int, why string) resourceapi.Device {
	attrs := attributes(p, why)
	attrs[HeldAttribute] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(held))}
	return resourceapi.Device{
		Name:                     SharedDevice,
		AllowMultipleAllocations: ptr.To(true),
		Attributes:               attrs,
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			SeatsCapacity: {
				Value:         *resource.NewQuantity(int64(capacity), resource.DecimalSI),
				RequestPolicy: requestPolicy(capacity),
			},
		},
	}
}

// requestPolicy is one seat unless a claim asks for more
// (capacity.requests): the extended resource form asks for devices, so it
// cannot ask for two seats of one device. The API server refuses a range
// whose min plus one step exceeds the capacity, and any option over it: one
// free seat is the single value 1, none is no policy (the device is then
// not offered).
func requestPolicy(capacity int) *resourceapi.CapacityRequestPolicy {
	one := resource.NewQuantity(1, resource.DecimalSI)
	switch {
	case capacity >= 2:
		return &resourceapi.CapacityRequestPolicy{
			Default:    one,
			ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: one, Step: resource.NewQuantity(1, resource.DecimalSI)},
		}
	case capacity == 1:
		return &resourceapi.CapacityRequestPolicy{Default: one, ValidValues: []resource.Quantity{*one}}
	default:
		return nil
	}
}
