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
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

func claim(uid string, at *time.Time, devices ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	if len(devices) == 0 {
		return c
	}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	if at != nil {
		c.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: *at}
	}
	for _, d := range devices {
		pool, dev, _ := strings.Cut(d, "/")
		driver := licensedriver.DriverName
		if pool == "gpu" {
			driver = "gpu.example.com"
		}
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourceapi.DeviceRequestAllocationResult{Driver: driver, Pool: pool, Device: dev, Request: "r"})
	}
	return c
}

func TestAllocations(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	t0 := clk.Now()
	a := newAllocations(clk.Now)
	a.set(claim("a", nil, "matlab/seat-0", "gpu/gpu-0"))
	earlier := t0.Add(-time.Hour)
	a.set(claim("b", &earlier, "matlab/seat-1", "cad/seat-0"))
	clk.Step(time.Minute)
	a.set(claim("a", nil, "matlab/seat-0", "gpu/gpu-0")) // an update that changes nothing keeps the time
	a.set(claim("c", nil))                               // not allocated
	// Two claims share one device: two seats.
	a.set(claim("e", nil, "matlab/seats"))
	a.set(claim("f", nil, "matlab/seats"))
	want := map[string][]seats.Hold{
		"matlab": {{Device: "seat-0", Since: t0, Seats: 1}, {Device: "seat-1", Since: earlier, Seats: 1}, {Device: "seats", Since: clk.Now(), Seats: 1}, {Device: "seats", Since: clk.Now(), Seats: 1}},
		"cad":    {{Device: "seat-0", Since: earlier, Seats: 1}},
	}
	if diff := cmp.Diff(want, sortedHolds(a.byPool())); diff != "" {
		t.Errorf("byPool (-want +got):\n%s", diff)
	}
	a.set(claim("b", nil)) // released
	a.remove("a")          // deleted
	a.remove("e")
	a.remove("f")
	a.remove("nope")
	if diff := cmp.Diff(map[string][]seats.Hold{}, a.byPool()); diff != "" {
		t.Errorf("byPool after release (-want +got):\n%s", diff)
	}
	future := clk.Now().Add(time.Hour) // a clock ahead of ours: not trusted
	a.set(claim("d", &future, "matlab/seat-2"))
	if got := a.byPool()["matlab"][0].Since; !got.Equal(clk.Now()) {
		t.Errorf("a future allocation timestamp gave %v, want now %v", got, clk.Now())
	}
}

func sortedHolds(m map[string][]seats.Hold) map[string][]seats.Hold {
	for _, h := range m {
		slices.SortFunc(h, func(a, b seats.Hold) int { return strings.Compare(a.Device, b.Device) })
	}
	return m
}

func testConfig(t *testing.T, onStale config.OnStale, features ...config.Feature) *config.Configuration {
	t.Helper()
	c := &config.Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: config.APIVersion, Kind: config.Kind},
		Source:   config.Source{HTTP: &config.HTTPSource{URL: "http://licsrv.example.com/"}},
		Features: features,
		OnStale:  onStale,
	}
	config.SetDefaults(c)
	if errs := config.Validate(c); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return c
}

func TestSyncDeviceClasses(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "MATLAB"}, config.Feature{Name: "Simulink_Toolbox"})
	stale := DeviceClass(config.Feature{Name: "OLD", Pool: "old", DeviceClassName: "old.licenses.adminsched.io", ResourceName: "licenses.adminsched.io/old"})
	drifted := DeviceClass(cfg.Features[0])
	drifted.Spec.ExtendedResourceName = ptr.To("example.com/other")
	foreign := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}
	client := fake.NewClientset(stale, drifted, foreign)
	if err := syncDeviceClasses(ctx, client, cfg.Features); err != nil {
		t.Fatal(err)
	}
	list, err := client.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range list.Items {
		got[c.Name] = ptr.Deref(c.Spec.ExtendedResourceName, "")
		if c.Name == "simulink-toolbox.licenses.adminsched.io" {
			want := `device.driver == "licenses.adminsched.io" && device.attributes["licenses.adminsched.io"].pool == "simulink-toolbox"`
			if e := c.Spec.Selectors[0].CEL.Expression; e != want {
				t.Errorf("selector %s, want %s", e, want)
			}
		}
	}
	want := map[string]string{
		"matlab.licenses.adminsched.io":           "licenses.adminsched.io/matlab",
		"simulink-toolbox.licenses.adminsched.io": "licenses.adminsched.io/simulink-toolbox",
		"gpu.example.com":                         "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DeviceClasses and their extended resource names (-want +got):\n%s", diff)
	}

	// A class of the configured name that is not ours is refused, not taken.
	cfg = testConfig(t, config.FailClosed, config.Feature{Name: "GPU", DeviceClassName: "gpu.example.com"})
	err = syncDeviceClasses(ctx, client, cfg.Features)
	if err == nil || !strings.Contains(err.Error(), "is not the license driver's") {
		t.Errorf("taking over a foreign DeviceClass: err %v", err)
	}
}

// TestStaleness: the source fails, goes stale, recovers; each transition
// gives one event, and the plan closes only under FailClosed.
func TestStaleness(t *testing.T) {
	for _, onStale := range []config.OnStale{config.FailClosed, config.Keep} {
		t.Run(string(onStale), func(t *testing.T) {
			ctx := context.Background()
			clk := testingclock.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			cfg := testConfig(t, onStale, config.Feature{Name: "MATLAB"}, config.Feature{Name: "CAD"})
			src := &fakeSource{features: map[string]source.Feature{"MATLAB": {Total: 4, InUse: 1}},
				unavailable: map[string]string{"CAD": "(Error: Cannot find license file)"}}
			rec := record.NewFakeRecorder(100)
			c := &controller{Options: Options{Config: cfg, Source: src, Clock: clk, Recorder: rec}, claims: newAllocations(clk.Now), missing: map[string]bool{}}

			c.read(ctx)
			free := func() int { return freeSeats(c.resources(ctx), "matlab") }
			if got := free(); got != 3 {
				t.Fatalf("free seats %d, want 3", got)
			}
			src.err = errors.New("connection refused")
			c.read(ctx)
			clk.Step(cfg.StaleAfter.Duration)
			c.read(ctx) // at the limit: not stale yet
			if got := free(); got != 3 {
				t.Errorf("free seats %d at staleAfter, want 3", got)
			}
			clk.Step(time.Second)
			c.read(ctx)
			wantFree := 3
			if onStale == config.FailClosed {
				wantFree = 0
			}
			if got := free(); got != wantFree {
				t.Errorf("free seats %d once stale, want %d", got, wantFree)
			}
			src.err = nil
			c.read(ctx)
			if got := free(); got != 3 {
				t.Errorf("free seats %d after recovery, want 3", got)
			}
			close(rec.Events)
			var reasons []string
			for e := range rec.Events {
				reasons = append(reasons, strings.Fields(e)[1])
				if strings.Contains(e, ReasonNotReported) && !strings.Contains(e, "(Error: Cannot find license file)") {
					t.Errorf("event %q does not say why the server gives no count", e)
				}
			}
			// Each event goes to both features' classes; CAD is not reported.
			want := []string{
				ReasonNotReported,
				ReasonSourceFailed, ReasonSourceFailed,
				ReasonSourceStale, ReasonSourceStale,
				ReasonSourceRecovered, ReasonSourceRecovered,
			}
			if diff := cmp.Diff(want, reasons); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSeatsCap: a feature's configured seats cap what the server reports.
func TestSeatsCap(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Now())
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "MATLAB", Seats: ptr.To[int32](2)})
	src := &fakeSource{features: map[string]source.Feature{"MATLAB": {Total: 10}}}
	c := &controller{Options: Options{Config: cfg, Source: src, Clock: clk}, claims: newAllocations(clk.Now), missing: map[string]bool{}}
	c.read(ctx)
	if got := freeSeats(c.resources(ctx), "matlab"); got != 2 {
		t.Errorf("free seats %d, want the configured 2", got)
	}
}

type fakeSource struct {
	features    map[string]source.Feature
	unavailable map[string]string
	err         error
}

func (f *fakeSource) Read(context.Context) (source.Reading, error) {
	if f.err != nil {
		return source.Reading{}, f.err
	}
	return source.Reading{Features: f.features, Unavailable: f.unavailable}, nil
}

func freeSeats(r *resourceslice.DriverResources, pool string) int {
	n := 0
	for _, s := range r.Pools[pool].Slices {
		for _, d := range s.Devices {
			switch {
			case len(d.Taints) > 0:
			case d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations:
				// Shared: no claim holds it in these tests.
				c := d.Capacity[seats.SeatsCapacity]
				n += int(c.Value.Value())
			default:
				n++
			}
		}
	}
	return n
}

// TestClusterCheckouts: a checkout from the host of a pod that holds one of
// the pool's seats is the cluster's; any other is someone else's.
func TestClusterCheckouts(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Now())
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "MATLAB"})
	src := &fakeSource{features: map[string]source.Feature{"MATLAB": {Total: 5, InUse: 3, Checkouts: []source.Checkout{
		{User: "ana", Host: "job-0.team.svc.cluster.local", Count: 1}, // a pod's
		{User: "bo", Host: "ws12", Count: 1},                          // a desktop
		{User: "cy", Host: "job-9", Count: 1},                         // a pod that holds no seat
	}}}}
	c := &controller{Options: Options{Config: cfg, Source: src, Clock: clk}, claims: newAllocations(clk.Now), missing: map[string]bool{}}
	for i, pod := range []string{"job-0", "job-1"} {
		cl := claim(pod+"-claim", nil, "matlab/"+seats.DeviceName(i))
		cl.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: pod, UID: types.UID(pod)}}
		c.claims.set(cl)
	}
	c.read(ctx)
	// 3 in use, 1 of them a pod's: 2 elsewhere; 5 - 2 - 2 held = 1 free.
	// job-1's allocation is new (inside the settle window): without the
	// host names the estimate would be 3 elsewhere, 0 free.
	if got := freeSeats(c.resources(ctx), "matlab"); got != 1 {
		t.Errorf("free seats %d, want 1", got)
	}
	if got := clusterCheckouts(src.features["MATLAB"].Checkouts, nil); got != 0 {
		t.Errorf("no pods: %d cluster checkouts, want 0", got)
	}
}
