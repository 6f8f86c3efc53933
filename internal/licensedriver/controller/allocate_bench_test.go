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
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
)

// What the scheduler pays per node it filters for a pod that asks for one
// seat. The DynamicResources plugin builds one allocator per pod in
// PreFilter (structured.NewAllocator) and calls its Allocate for the pod's
// claim once per node in Filter; for an allNodes pool every call gathers
// and converts every slice of the pool again, so one Allocate call is the
// cost of one node filtered.

// schedulerAllocatorFeatures are the features the scheduler's
// DynamicResources plugin passes to the allocator with the default feature
// gates of Kubernetes v1.37.2 (dynamicresources.AllocatorFeatures); they
// pick the "incubating" allocator.
var schedulerAllocatorFeatures = structured.Features{
	AdminAccess:            true,
	ConsumableCapacity:     true,
	DeviceBindingAndStatus: true,
	DeviceTaints:           true,
	PartitionableDevices:   true,
	PrioritizedList:        true,
}

// allocateBenchNodes is the number of node names Allocate is called with in
// turn, as the scheduler's Filter walks the nodes of a 500-node cluster.
const allocateBenchNodes = 500

// BenchmarkAllocatePerNode is one Allocate call of the scheduler's
// allocator, for a claim of one seat (the form the scheduler makes of
// resources.limits), on the slices the controller publishes: one shared
// device (devices=Shared) or one device per seat (devices=PerSeat), with
// held% of the seats held by other claims. The held seats are the first
// ones, as the allocator hands them out. form=taint is the form before
// commit cad5593: unavailable seats NoSchedule-tainted, and a class
// selector without "offered".
func BenchmarkAllocatePerNode(b *testing.B) {
	for _, held := range []int{0, 50, 99} {
		b.Run(fmt.Sprintf("devices=Shared/seats=3072/held=%d%%/form=offered", held), func(b *testing.B) {
			benchmarkAllocate(b, config.Shared, 3072, held, false)
		})
	}
	for _, n := range []int{128, 1024, 3072, 10000} {
		for _, held := range []int{0, 50, 99} {
			for _, taint := range []bool{false, true} {
				form := "offered"
				if taint {
					form = "taint"
				}
				b.Run(fmt.Sprintf("devices=PerSeat/seats=%d/held=%d%%/form=%s", n, held, form), func(b *testing.B) {
					benchmarkAllocate(b, config.PerSeat, n, held, taint)
				})
			}
		}
	}
}

func benchmarkAllocate(b *testing.B, devices config.Devices, n, heldPercent int, taint bool) {
	ctx := context.Background()
	a, claim, want := allocateBenchSetup(b, devices, n, heldPercent, taint)
	nodes := make([]*v1.Node, allocateBenchNodes)
	for i := range nodes {
		nodes[i] = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}}
	}
	claims := []*resourceapi.ResourceClaim{claim}
	// The claim gets the first free seat: the benchmark measures a Filter
	// that succeeds, as it does while seats are free.
	results, err := a.Allocate(ctx, nodes[0], claims)
	if err != nil || len(results) != 1 {
		b.Fatalf("Allocate: %v, %d results", err, len(results))
	}
	if got := results[0].Devices.Results[0].Device; got != want {
		b.Fatalf("allocated %s, want %s", got, want)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		results, err := a.Allocate(ctx, nodes[i%len(nodes)], claims)
		if err != nil || results == nil {
			b.Fatalf("Allocate on %s: %v, %d results", nodes[i%len(nodes)].Name, err, len(results))
		}
		i++
	}
}

// allocateBenchSetup returns the allocator the scheduler's PreFilter would
// build for a pod asking one seat of a feature of n seats, the first
// heldPercent of them held by other claims (not settled, no checkouts
// elsewhere), and the device the claim should get. taint publishes the
// plan in the form before commit cad5593 (see taintForm).
func allocateBenchSetup(b *testing.B, devices config.Devices, n, heldPercent int, taint bool) (structured.Allocator, *resourceapi.ResourceClaim, string) {
	b.Helper()
	c := staticController(b, n, devices)
	cfg := c.Config
	feature := cfg.Features[0]
	held := n * heldPercent / 100
	claims := make([]*resourceapi.ResourceClaim, 0, held)
	for i := range held {
		r := resourceapi.DeviceRequestAllocationResult{Driver: licensedriver.DriverName, Pool: feature.Pool, Device: seats.DeviceName(i), Request: "seat"}
		if devices == config.Shared {
			r.Device = seats.SharedDevice
			r.ShareID = ptr.To(types.UID(fmt.Sprintf("share-%d", i)))
			r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{seats.SeatsCapacity: *resource.NewQuantity(1, resource.DecimalSI)}
		}
		name := fmt.Sprintf("held-%d", i)
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("team/" + name)},
			Status: resourceapi.ResourceClaimStatus{
				Allocation:  &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{r}}},
				ReservedFor: []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: name, UID: types.UID("pod-" + name)}},
			},
		}
		c.claims.set(claim)
		claims = append(claims, claim)
	}
	// As the scheduler's informer holds them: every device with maps of its
	// own (the controller's plan shares them between devices).
	var slices []*resourceapi.ResourceSlice
	for _, s := range published(c.resources(context.Background()), 1) {
		slices = append(slices, s.DeepCopy())
	}
	cls := classesOf(cfg)
	if taint {
		cls = taintForm(slices, cfg)
	}
	a, err := structured.NewAllocator(context.Background(), schedulerAllocatorFeatures, allocatedState(claims), cls, slices, celCache)
	if err != nil {
		b.Fatalf("NewAllocator: %v", err)
	}
	want := seats.DeviceName(held)
	if devices == config.Shared {
		want = seats.SharedDevice
	}
	return a, seatClaim("team", "pod", feature.DeviceClassName, 1, false, false), want
}

// taintForm turns PerSeat slices, in place, into the form published before
// commit cad5593: every device has the attributes pool and feature only, an
// unoffered one a NoSchedule taint whose value says why; it returns the
// classes of that form, which select the pool's devices without looking at
// "offered".
func taintForm(slices []*resourceapi.ResourceSlice, cfg *config.Configuration) classes {
	const taintKey = licensedriver.DriverName + "/unavailable"
	for _, s := range slices {
		for j := range s.Spec.Devices {
			d := &s.Spec.Devices[j]
			if !seats.Offered(*d) {
				why := ptr.Deref(d.Attributes[seats.UnavailableAttribute].StringValue, "")
				d.Taints = []resourceapi.DeviceTaint{{Key: taintKey, Value: why, Effect: resourceapi.DeviceTaintEffectNoSchedule}}
			}
			delete(d.Attributes, seats.OfferedAttribute)
			delete(d.Attributes, seats.UnavailableAttribute)
		}
	}
	var cls classes
	for _, f := range cfg.Features {
		class := DeviceClass(f)
		class.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == %q && device.attributes[%q].%s == %q",
				licensedriver.DriverName, licensedriver.DriverName, seats.PoolAttribute, f.Pool),
		}}}
		cls = append(cls, class)
	}
	return cls
}
