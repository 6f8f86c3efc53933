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
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
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
	if diff := cmp.Diff(want, sortedHolds(a.snapshot().holds)); diff != "" {
		t.Errorf("byPool (-want +got):\n%s", diff)
	}
	a.set(claim("b", nil)) // released
	a.remove("a")          // deleted
	a.remove("e")
	a.remove("f")
	a.remove("nope")
	if diff := cmp.Diff(map[string][]seats.Hold{}, a.snapshot().holds); diff != "" {
		t.Errorf("byPool after release (-want +got):\n%s", diff)
	}
	future := clk.Now().Add(time.Hour) // a clock ahead of ours: not trusted
	a.set(claim("d", &future, "matlab/seat-2"))
	if got := a.snapshot().holds["matlab"][0].Since; !got.Equal(clk.Now()) {
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
			want := `device.driver == "licenses.adminsched.io" && device.attributes["licenses.adminsched.io"].pool == "simulink-toolbox" && device.attributes["licenses.adminsched.io"].offered`
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
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		// The minor's classes map no name, and the drifted one loses its.
		want["matlab.licenses.adminsched.io"] = ""
		want["simulink-toolbox.licenses.adminsched.io"] = ""
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
// TestRunRefusesSharedWithoutConsumableCapacity: on a minor whose API
// server drops consumable capacity, Run says so instead of publishing one
// device that a single claim would hold whole.
func TestRunRefusesSharedWithoutConsumableCapacity(t *testing.T) {
	if kubeversion.Has(kubeversion.DRAConsumableCapacity) {
		t.Skipf("Kubernetes %s has %s", kubeversion.String(), kubeversion.DRAConsumableCapacity.Name)
	}
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "MATLAB"})
	cfg.Devices = config.Shared
	err := Run(context.Background(), Options{Client: fake.NewClientset(), Config: cfg})
	if err == nil || !strings.Contains(err.Error(), kubeversion.Unavailable(kubeversion.DRAConsumableCapacity).Error()) {
		t.Errorf("Run with devices: Shared: err %v, want %v", err, kubeversion.Unavailable(kubeversion.DRAConsumableCapacity))
	}
}

func TestStaleness(t *testing.T) {
	for _, onStale := range []config.OnStale{config.FailClosed, config.Keep} {
		t.Run(string(onStale), func(t *testing.T) {
			ctx := context.Background()
			clk := testingclock.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			cfg := testConfig(t, onStale, config.Feature{Name: "MATLAB"}, config.Feature{Name: "CAD"})
			src := &fakeSource{features: map[string]source.Feature{"MATLAB": {Total: 4, InUse: 1}},
				unavailable: map[string]string{"CAD": "(Error: Cannot find license file)"}}
			rec := record.NewFakeRecorder(100)
			c := newController(Options{Config: cfg, Source: src, Clock: clk, Recorder: rec})

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
	c := newController(Options{Config: cfg, Source: src, Clock: clk})
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
			case !seats.Offered(d):
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
	c := newController(Options{Config: cfg, Source: src, Clock: clk})
	for i, pod := range []string{"job-0", "job-1"} {
		cl := claim(pod+"-claim", nil, "matlab/"+seats.DeviceName(i))
		cl.Namespace = "team"
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
}

// TestClusterCheckoutsAttribution: checkouts are the cluster's only up to
// the seats its claims hold, by pod host name in any letter case, and a
// desktop that shares a pod's first label is not the pod.
func TestClusterCheckoutsAttribution(t *testing.T) {
	long := strings.Repeat("a", 62) + "-bcdef" // the kubelet cuts it to 62 a's
	tests := []struct {
		name      string
		checkouts []source.Checkout
		claims    []poolClaim
		want      int
	}{{
		name:      "a desktop whose first label is a pod's name is not the pod",
		checkouts: []source.Checkout{{Host: "build-1.corp.example.com", Count: 3}},
		claims:    []poolClaim{{namespace: "ci", pods: []string{"build-1"}, seats: 1}},
		want:      0,
	}, {
		name:      "a pod's fully qualified name holds its namespace",
		checkouts: []source.Checkout{{Host: "build-1.svc-a.ci.svc.cluster.local", Count: 1}},
		claims:    []poolClaim{{namespace: "ci", pods: []string{"build-1"}, seats: 1}},
		want:      1,
	}, {
		name:      "host names compare in any letter case",
		checkouts: []source.Checkout{{Host: "BUILD-1", Count: 1}},
		claims:    []poolClaim{{namespace: "ci", pods: []string{"build-1"}, seats: 1}},
		want:      1,
	}, {
		name:      "a host with more checkouts than its claim's seats (linger, 2 licenses) gives the claim's seats",
		checkouts: []source.Checkout{{Host: "build-1", Count: 2}, {Host: "build-1", Count: 1}},
		claims:    []poolClaim{{namespace: "ci", pods: []string{"build-1"}, seats: 1}},
		want:      1,
	}, {
		name:      "pods that share one claim of one seat give one seat",
		checkouts: []source.Checkout{{Host: "web-0", Count: 1}, {Host: "web-1", Count: 1}, {Host: "web-2", Count: 1}},
		claims:    []poolClaim{{namespace: "ci", pods: []string{"web-0", "web-1", "web-2"}, seats: 1}},
		want:      1,
	}, {
		name:      "pods of one name in two namespaces: one checkout is given once",
		checkouts: []source.Checkout{{Host: "job", Count: 1}},
		claims:    []poolClaim{{namespace: "a", pods: []string{"job"}, seats: 1}, {namespace: "b", pods: []string{"job"}, seats: 1}},
		want:      1,
	}, {
		name:      "each of two pods of one name checked out: two",
		checkouts: []source.Checkout{{Host: "job", Count: 1}, {Host: "job", Count: 1}},
		claims:    []poolClaim{{namespace: "a", pods: []string{"job"}, seats: 1}, {namespace: "b", pods: []string{"job"}, seats: 1}},
		want:      2,
	}, {
		name:      "a pod name over 63 characters: the host name is cut",
		checkouts: []source.Checkout{{Host: strings.Repeat("a", 62), Count: 1}},
		claims:    []poolClaim{{namespace: "ci", pods: []string{long}, seats: 1}},
		want:      1,
	}, {
		name:      "no claims, no cluster checkouts",
		checkouts: []source.Checkout{{Host: "job-0", Count: 1}},
		want:      0,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clusterCheckouts(tt.checkouts, tt.claims); got != tt.want {
				t.Errorf("clusterCheckouts = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOverLimitFailsClosed: a source that reports more seats than maxSeats
// for a feature whose seats are not set offers none (rather than one device
// per reported seat), with an event and a metric, until it reports fewer.
func TestOverLimitFailsClosed(t *testing.T) {
	RegisterMetrics()
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Now())
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "MATLAB"}, config.Feature{Name: "CAD", Seats: ptr.To[int32](5)})
	src := &fakeSource{features: map[string]source.Feature{"MATLAB": {Total: 400000}, "CAD": {Total: 400000}}}
	rec := record.NewFakeRecorder(10)
	c := newController(Options{Config: cfg, Source: src, Clock: clk, Recorder: rec})
	held := claim("held", nil, "matlab/seat-0")
	c.claims.set(held)
	c.read(ctx)
	r := c.resources(ctx)
	devices := 0
	for _, s := range r.Pools["matlab"].Slices {
		devices += len(s.Devices)
	}
	if got := freeSeats(r, "matlab"); got != 0 || devices != 1 {
		t.Errorf("over maxSeats: %d free seats in %d devices, want none free and only the held seat published", got, devices)
	}
	if got := freeSeats(r, "cad"); got != 5 {
		t.Errorf("a feature whose seats cap the report: %d free, want 5", got)
	}
	if v, err := testutil.GetGaugeMetricValue(featureOverLimit.WithLabelValues("matlab")); err != nil || v != 1 {
		t.Errorf("feature_over_limit{pool=matlab} = %v (%v), want 1", v, err)
	}
	if v, _ := testutil.GetGaugeMetricValue(featureOverLimit.WithLabelValues("cad")); v != 0 {
		t.Errorf("feature_over_limit{pool=cad} = %v, want 0", v)
	}
	c.resources(ctx) // no second event
	src.features["MATLAB"] = source.Feature{Total: 10}
	c.read(ctx)
	if got := freeSeats(c.resources(ctx), "matlab"); got != 9 {
		t.Errorf("back within maxSeats: %d free, want 9", got)
	}
	if v, _ := testutil.GetGaugeMetricValue(featureOverLimit.WithLabelValues("matlab")); v != 0 {
		t.Errorf("feature_over_limit{pool=matlab} = %v once within, want 0", v)
	}
	close(rec.Events)
	var events []string
	for e := range rec.Events {
		events = append(events, e)
	}
	if len(events) != 2 || !strings.Contains(events[0], ReasonOverLimit) || !strings.Contains(events[0], "400000") || !strings.Contains(events[1], ReasonWithinLimit) {
		t.Errorf("events %q, want one %s naming the 400000 reported, then one %s", events, ReasonOverLimit, ReasonWithinLimit)
	}
}

// TestHeldTwice: a seat held by two claims without sharing (two schedulers
// allocated it) raises an event and a metric.
func TestHeldTwice(t *testing.T) {
	RegisterMetrics()
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Now())
	cfg := testConfig(t, config.FailClosed, config.Feature{Name: "SIM"})
	rec := record.NewFakeRecorder(10)
	c := newController(Options{Config: cfg, Source: &fakeSource{features: map[string]source.Feature{"SIM": {Total: 3}}}, Clock: clk, Recorder: rec})
	c.read(ctx)
	for _, name := range []string{"a", "b"} {
		cl := claim(name, nil, "sim/seat-0")
		cl.Namespace, cl.Name = "ns", name
		c.claims.set(cl)
	}
	shared := claim("c", nil, "sim/seats")
	shared.Status.Allocation.Devices.Results[0].ShareID = ptr.To(types.UID("s1"))
	c.claims.set(shared)
	shared2 := claim("d", nil, "sim/seats")
	shared2.Status.Allocation.Devices.Results[0].ShareID = ptr.To(types.UID("s2"))
	c.claims.set(shared2)
	c.resources(ctx)
	c.resources(ctx)
	if v, err := testutil.GetGaugeMetricValue(heldTwice.WithLabelValues("sim")); err != nil || v != 1 {
		t.Errorf("devices_held_twice{pool=sim} = %v (%v), want 1", v, err)
	}
	close(rec.Events)
	var events []string
	for e := range rec.Events {
		if strings.Contains(e, ReasonHeldTwice) {
			events = append(events, e)
		}
	}
	if len(events) != 1 || !strings.Contains(events[0], "seat-0 by ns/a and ns/b") {
		t.Errorf("events %q, want one naming seat-0 by ns/a and ns/b", events)
	}
}
