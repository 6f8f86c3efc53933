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
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
)

// The scheduler's own allocator (k8s.io/dynamic-resource-allocation
// structured, as the DynamicResources plugin calls it) on the controller's
// plans: what a claim really gets from what the driver publishes.

// allocatorFeatures are the DRA features on in Kubernetes v1.37 that seats
// use: consumable capacity (Shared) and device taints (a claim's
// tolerations are honoured).
var allocatorFeatures = structured.Features{ConsumableCapacity: true, DeviceTaints: true}

var celCache = cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})

// published turns a plan into the ResourceSlices the publisher writes:
// generation gen of each pool.
func published(r *resourceslice.DriverResources, gen int64) []*resourceapi.ResourceSlice {
	var out []*resourceapi.ResourceSlice
	for _, pool := range slices.Sorted(mapsKeys(r.Pools)) {
		p := r.Pools[pool]
		for i, s := range p.Slices {
			out = append(out, &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%03d", licensedriver.DriverName, pool, i)},
				Spec: resourceapi.ResourceSliceSpec{
					Driver:   licensedriver.DriverName,
					Pool:     resourceapi.ResourcePool{Name: pool, Generation: gen, ResourceSliceCount: int64(len(p.Slices))},
					AllNodes: ptr.To(publishedAllNodes(p)),
					Devices:  s.Devices,
				},
			})
		}
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type classes []*resourceapi.DeviceClass

func (c classes) List() ([]*resourceapi.DeviceClass, error) { return c, nil }
func (c classes) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, class := range c {
		if class.Name == name {
			return class, nil
		}
	}
	return nil, fmt.Errorf("no DeviceClass %s", name)
}

func classesOf(cfg *config.Configuration) classes {
	var out classes
	for _, f := range cfg.Features {
		out = append(out, DeviceClass(f))
	}
	return out
}

// allocatedState is what the scheduler knows is allocated, from the claims.
func allocatedState(claims []*resourceapi.ResourceClaim) structured.AllocatedState {
	s := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID == nil {
				s.AllocatedDevices.Insert(id)
				continue
			}
			s.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			s.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
		}
	}
	return s
}

// seatClaim is a claim for n seats of class: n devices (the form the
// scheduler makes of resources.limits), or one device with n seats of its
// capacity (the Shared form) when capacity is set. tolerate gives its
// request a toleration of every taint.
func seatClaim(ns, name, class string, n int64, capacity, tolerate bool) *resourceapi.ResourceClaim {
	req := &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: n}
	if capacity {
		req.Count = 1
		req.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
			seats.SeatsCapacity: *resource.NewQuantity(n, resource.DecimalSI),
		}}
	}
	if tolerate {
		req.Tolerations = []resourceapi.DeviceToleration{{Operator: resourceapi.DeviceTolerationOpExists}}
	}
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "seat", Exactly: req}}}},
	}
}

// allocate runs the scheduler's allocator for claim on the published slices,
// next to the allocated claims; on success it records the allocation in
// claim, reserved for the pod of the claim's name, and returns true.
func allocate(t testing.TB, claim *resourceapi.ResourceClaim, allocated []*resourceapi.ResourceClaim, cls classes, published []*resourceapi.ResourceSlice, now time.Time) bool {
	t.Helper()
	ctx := context.Background()
	a, err := structured.NewAllocator(ctx, allocatorFeatures, allocatedState(allocated), cls, published, celCache)
	if err != nil {
		t.Fatalf("NewAllocator: %v", err)
	}
	results, err := a.Allocate(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, []*resourceapi.ResourceClaim{claim})
	if err != nil {
		t.Fatalf("Allocate %s: %v", claim.Name, err)
	}
	if results == nil {
		return false
	}
	claim.Status.Allocation = &results[0]
	claim.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: now}
	claim.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: claim.Name, UID: types.UID("pod-" + claim.Name)}}
	return true
}
