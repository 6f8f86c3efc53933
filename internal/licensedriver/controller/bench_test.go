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
	"runtime"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// staticController is a controller of one feature MATLAB of n seats, none
// in use, that has read its source.
func staticController(tb testing.TB, n int, devices config.Devices) *controller {
	tb.Helper()
	cfg := &config.Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: config.APIVersion, Kind: config.Kind},
		Source:   config.Source{Static: &config.StaticSource{}},
		Features: []config.Feature{{Name: "MATLAB", Seats: ptr.To(int32(n))}},
		Devices:  devices,
	}
	config.SetDefaults(cfg)
	if errs := config.Validate(cfg); len(errs) > 0 {
		tb.Fatal(errs)
	}
	c := newController(Options{Config: cfg, Clock: clock.RealClock{}})
	c.last = &source.Reading{Features: map[string]source.Feature{"MATLAB": {Total: n}}}
	c.lastOK = time.Now()
	return c
}

// seatsController is a controller of one feature of n seats, half of them
// held by claims of one seat each, as after a burst.
func seatsController(b *testing.B, n int, devices config.Devices) *controller {
	c := staticController(b, n, devices)
	device := seats.DeviceName
	shareID := func(int) *types.UID { return nil }
	if devices == config.Shared {
		device = func(int) string { return seats.SharedDevice }
		shareID = func(i int) *types.UID { return ptr.To(types.UID(fmt.Sprintf("share-%d", i))) }
	}
	for i := range n / 2 {
		c.claims.set(&resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprintf("claim-%d", i))},
			Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
				Results: []resourceapi.DeviceRequestAllocationResult{{Driver: licensedriver.DriverName, Pool: "matlab", Device: device(i), Request: "r", ShareID: shareID(i)}},
			}}},
		})
	}
	return c
}

// BenchmarkPlan10000Seats plans a pool of 10,000 seats with 5,000 held: the
// work after every claim event and every poll, in both device modes.
// MiB-retained is the heap the controller keeps for it (the claims it tracks
// and the plan the publisher is handed), measured after a GC.
func BenchmarkPlan10000Seats(b *testing.B) {
	b.Run("devices=PerSeat", func(b *testing.B) { benchmarkPlan(b, config.PerSeat, 79) })
	b.Run("devices=Shared", func(b *testing.B) { benchmarkPlan(b, config.Shared, 1) })
}

func benchmarkPlan(b *testing.B, devices config.Devices, wantSlices int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := seatsController(b, 10000, devices)
	plan := c.resources(context.Background())
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := len(plan.Pools["matlab"].Slices); got != wantSlices {
		b.Fatalf("%d slices, want %d", got, wantSlices)
	}
	retained := float64(after.HeapInuse-before.HeapInuse) / (1 << 20)
	runtime.KeepAlive(c)
	runtime.KeepAlive(plan)
	b.ReportAllocs()
	for b.Loop() {
		c.resources(context.Background())
	}
	b.ReportMetric(retained, "MiB-retained")
}
