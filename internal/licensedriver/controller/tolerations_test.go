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
	"time"

	resourceapi "k8s.io/api/resource/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// TestTolerationsGetNoUnofferedSeat: 5 seats issued, 4 checked out on
// desktops. Three claims for 3 seats that tolerate every device taint and a
// claim for one seat (the form of resources.limits) get, through the
// scheduler's allocator, one seat between them.
func TestTolerationsGetNoUnofferedSeat(t *testing.T) {
	for _, devices := range []config.Devices{config.PerSeat, config.Shared} {
		t.Run(string(devices), func(t *testing.T) {
			ctx := context.Background()
			clk := testingclock.NewFakeClock(time.Now())
			cfg := testConfig(t, config.FailClosed, config.Feature{Name: "CAD"})
			cfg.Devices = devices
			src := &fakeSource{features: map[string]source.Feature{"CAD": {Total: 5, InUse: 4, Checkouts: []source.Checkout{
				{Host: "ws1", Count: 2}, {Host: "ws2", Count: 2},
			}}}}
			c := newController(Options{Config: cfg, Source: src, Clock: clk})
			c.read(ctx)
			cls := classesOf(cfg)
			class := cfg.Features[0].DeviceClassName
			var claims []*resourceapi.ResourceClaim
			var checker seatcheck.Checker
			for i, claim := range []*resourceapi.ResourceClaim{
				seatClaim("team", "tolerant-0", class, 3, false, true),
				seatClaim("team", "tolerant-1", class, 3, devices == config.Shared, true),
				seatClaim("team", "tolerant-2", class, 1, false, true),
				seatClaim("team", "limits", class, 1, false, false),
			} {
				slices := published(c.resources(ctx), int64(i+1))
				if allocate(t, claim, claims, cls, slices, clk.Now()) {
					claims = append(claims, claim)
					c.claims.set(claim)
				}
				if err := checker.Check(seatcheck.State{Claims: claims, Slices: slices, Truth: map[string]seatcheck.Truth{"cad": {Total: 5, External: 4}}}); err != nil {
					t.Error(err)
				}
			}
			var got []string
			for _, cl := range claims {
				for _, r := range cl.Status.Allocation.Devices.Results {
					got = append(got, fmt.Sprintf("%s:%s(%d)", cl.Name, r.Device, seatcheck.Seats(r)))
				}
			}
			if checker.Peak["cad"] > 1 {
				t.Errorf("%d seats allocated (%v) with 4 of 5 checked out elsewhere, want at most 1", checker.Peak["cad"], got)
			}
		})
	}
}
