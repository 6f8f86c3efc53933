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

package integration

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"context"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
)

// forEachDeviceMode runs test once per way of publishing seats: one shared
// device per feature (the default), one device per seat.
func forEachDeviceMode(t *testing.T, test func(*testing.T, config.Devices)) {
	for _, devices := range []config.Devices{config.Shared, config.PerSeat} {
		t.Run("devices="+string(devices), func(t *testing.T) { test(t, devices) })
	}
}

// licenseScheduler runs our scheduler with our three plugins next to the
// default ones, DynamicResources among them.
func (tc *testContext) licenseScheduler() {
	tc.startScheduler(schedulerConfig(profile("NodeLessPods", 1, nil, "PlacementPolicy", "MaintenanceWindow")))
}

// createLicensePods creates n pods named prefix-i asking for seats.
func (tc *testContext) createLicensePods(prefix string, n int, seatsOf map[string]int64) []string {
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		tc.createPod(tc.licensePod(name, seatsOf))
		names = append(names, name)
	}
	return names
}

// waitBound waits until exactly the pods of want are bound among names,
// then checks that no other of names gets bound for a while (the seats are
// gone, not late).
func (tc *testContext) waitBoundCount(names []string, want int) []string {
	tc.t.Helper()
	var bound []string
	count := func() []string {
		all := sets.New(tc.boundPods()...)
		var out []string
		for _, n := range names {
			if all.Has(n) {
				out = append(out, n)
			}
		}
		return out
	}
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		bound = count()
		return len(bound) >= want, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d of %d pods to be bound (%d are): %v", want, len(names), len(bound), err)
	}
	time.Sleep(3 * time.Second)
	if bound = count(); len(bound) != want {
		tc.t.Fatalf("%d of %d pods bound, want %d", len(bound), len(names), want)
	}
	return bound
}

// TestLicenseSeatsBurst: 50 pods on 20 seats. A watch of the claims checks,
// at every change, that no more than 20 seats are held and no seat twice;
// pods complete (are deleted) as they run, and all 50 get a seat in the end.
func TestLicenseSeatsBurst(t *testing.T) {
	forEachDeviceMode(t, licenseSeatsBurst)
}

func licenseSeatsBurst(t *testing.T, devices config.Devices) {
	tc := newTestContext(t)
	tc.createNodes(makeNode(tc.ns+"-a"), makeNode(tc.ns+"-b"), makeNode(tc.ns+"-c"))
	cfg, features := tc.licenseConfigFor(devices, "BURST")
	f := features["BURST"]
	server := newLicenseServer(map[string]int{"BURST": 20})
	tc.startLicenseController(cfg, server)
	tc.waitFreeSeats(f.Pool, 20)
	watch := tc.watchSeats(func() map[string]seatcheck.Truth { return server.truth(features) })
	tc.licenseScheduler()

	names := tc.createLicensePods("job", 50, map[string]int64{f.ResourceName: 1})
	tc.waitBoundCount(names, 20)
	if msg := tc.waitPendingMessage(names); !strings.Contains(msg, "cannot allocate all claims") {
		t.Errorf("a waiting pod's FailedScheduling message %q does not say it waits for a claim", msg)
	}

	ran := sets.New[string]()
	err := wait.PollUntilContextTimeout(tc.ctx, 200*time.Millisecond, 3*waitTimeout, true, func(context.Context) (bool, error) {
		for _, n := range tc.boundPods() {
			ran.Insert(n)
			tc.deletePod(tc.ns, n) // the pod completes
		}
		return ran.Len() == len(names), nil
	})
	if err != nil {
		t.Fatalf("%d of %d pods got a seat: %v", ran.Len(), len(names), err)
	}
	if peak := watch.check(t)[f.Pool]; peak != 20 {
		t.Errorf("at most %d seats were held at once, want all 20 used", peak)
	}
}

// waitPendingMessage returns the FailedScheduling message of one of names
// that is not bound.
func (tc *testContext) waitPendingMessage(names []string) string {
	tc.t.Helper()
	bound := sets.New(tc.boundPods()...)
	for _, n := range names {
		if !bound.Has(n) {
			return tc.failedSchedulingMessage(n)
		}
	}
	tc.t.Fatal("every pod is bound")
	return ""
}

// TestLicenseSeatsPerPodAndFeatures: pods asking for 2 seats, two features,
// and a feature that does not exist.
func TestLicenseSeatsPerPodAndFeatures(t *testing.T) {
	forEachDeviceMode(t, licenseSeatsPerPodAndFeatures)
}

func licenseSeatsPerPodAndFeatures(t *testing.T, devices config.Devices) {
	tc := newTestContext(t)
	tc.createNodes(makeNode(tc.ns + "-a"))
	cfg, features := tc.licenseConfigFor(devices, "SOLVER", "VIEWER")
	solver, viewer := features["SOLVER"], features["VIEWER"]
	server := newLicenseServer(map[string]int{"SOLVER": 5, "VIEWER": 2})
	tc.startLicenseController(cfg, server)
	tc.waitFreeSeats(solver.Pool, 5)
	tc.waitFreeSeats(viewer.Pool, 2)
	watch := tc.watchSeats(func() map[string]seatcheck.Truth { return server.truth(features) })
	tc.licenseScheduler()

	// Two seats of one feature: resources.limits asks for two devices; the
	// Shared form has one device per feature, so a claim asks for two seats
	// of its capacity.
	var twoSolvers []string
	for i := range 3 {
		name := fmt.Sprintf("two-solvers-%d", i)
		if devices == config.Shared {
			tc.createPod(tc.seatClaimPod(name, solver.DeviceClassName, 2))
		} else {
			tc.createPod(tc.licensePod(name, map[string]int64{solver.ResourceName: 2}))
		}
		twoSolvers = append(twoSolvers, name)
	}
	tc.waitBoundCount(twoSolvers, 2)
	// One solver seat is left: one of two pods that need a seat of each
	// feature runs.
	both := tc.createLicensePods("both", 2, map[string]int64{viewer.ResourceName: 1, solver.ResourceName: 1})
	missing := "licenses.adminsched.io/no-such-feature"
	tc.createPod(tc.licensePod("missing", map[string]int64{missing: 1}))

	tc.waitBoundCount(both, 1)
	if msg := tc.failedSchedulingMessage("missing"); !strings.Contains(msg, "Insufficient "+missing) {
		t.Errorf("the pod asking for a feature no DeviceClass maps got %q, want it to name %q", msg, missing)
	}
	peak := watch.check(t)
	if peak[solver.Pool] != 5 || peak[viewer.Pool] != 1 {
		t.Errorf("peak seats held %v, want 5 of %s and 1 of %s", peak, solver.Pool, viewer.Pool)
	}
}

// TestLicenseExternalCheckouts: seats checked out outside the cluster while
// pods run take no running pod's seat; new pods wait, and start when the
// outside checkouts end. The server lists its checkouts by host: a desktop
// whose name starts with a pod's is not that pod, and a pod that has not
// checked out yet (inside the settle window) still holds its seat.
func TestLicenseExternalCheckouts(t *testing.T) {
	forEachDeviceMode(t, licenseExternalCheckouts)
}

func licenseExternalCheckouts(t *testing.T, devices config.Devices) {
	tc := newTestContext(t)
	tc.createNodes(makeNode(tc.ns + "-a"))
	cfg, features := tc.licenseConfigFor(devices, "CAD")
	f := features["CAD"]
	server := newLicenseServer(map[string]int{"CAD": 5})
	tc.startLicenseController(cfg, server)
	tc.waitFreeSeats(f.Pool, 5)
	watch := tc.watchSeats(func() map[string]seatcheck.Truth { return server.truth(features) })
	tc.licenseScheduler()

	first := tc.createLicensePods("first", 3, map[string]int64{f.ResourceName: 1})
	tc.waitBoundCount(first, 3)
	// Two of the 3 pods check out their seats; two desktops check out 2
	// more, one of them named like the third pod, with a domain. 3 held + 2
	// outside: none free.
	server.podCheckout(t, "CAD", first[0], 1)
	server.podCheckout(t, "CAD", first[1], 1)
	server.desktop(t, "CAD", "ws12", 1)
	server.desktop(t, "CAD", first[2]+".corp.example.com", 1)
	tc.waitFreeSeats(f.Pool, 0)
	second := tc.createLicensePods("second", 2, map[string]int64{f.ResourceName: 1})
	tc.waitBoundCount(append(slices.Clone(first), second...), 3)
	if bound := tc.waitBoundCount(first, 3); len(bound) != 3 {
		t.Fatalf("running pods lost: %v", bound)
	}
	// The desktops check their seats in.
	server.desktop(t, "CAD", "ws12", 0)
	server.desktop(t, "CAD", first[2]+".corp.example.com", 0)
	tc.waitBoundCount(second, 2)
	watch.check(t)
}

// TestLicenseSourceDownAndControllerRestart: the license server goes down
// (fail-closed: new pods wait, running pods keep their seats and devices)
// and comes back; then the controller is stopped mid-burst and restarted:
// no seat is lost, none counted twice, no allocated device withdrawn.
func TestLicenseSourceDownAndControllerRestart(t *testing.T) {
	forEachDeviceMode(t, licenseSourceDownAndControllerRestart)
}

func licenseSourceDownAndControllerRestart(t *testing.T, devices config.Devices) {
	tc := newTestContext(t)
	tc.createNodes(makeNode(tc.ns+"-a"), makeNode(tc.ns+"-b"))
	cfg, features := tc.licenseConfigFor(devices, "SIM")
	f := features["SIM"]
	server := newLicenseServer(map[string]int{"SIM": 6})
	stop := tc.startLicenseController(cfg, server)
	tc.waitFreeSeats(f.Pool, 6)
	watch := tc.watchSeats(func() map[string]seatcheck.Truth { return server.truth(features) })
	tc.licenseScheduler()

	early := tc.createLicensePods("early", 2, map[string]int64{f.ResourceName: 1})
	tc.waitBoundCount(early, 2)
	server.setError(errors.New("connection refused"))
	tc.waitFreeSeats(f.Pool, 0)
	tc.checkAllocatedPublished(f.Pool)
	during := tc.createLicensePods("during", 1, map[string]int64{f.ResourceName: 1})
	tc.waitBoundCount(during, 0)
	server.setError(nil)
	tc.waitBoundCount(during, 1)

	// Stop the controller with 3 seats free, create 5 pods, restart it.
	tc.waitFreeSeats(f.Pool, 3)
	stop()
	burst := tc.createLicensePods("burst", 5, map[string]int64{f.ResourceName: 1})
	tc.waitBoundCount(burst, 3)
	tc.startLicenseController(cfg, server)
	tc.waitFreeSeats(f.Pool, 0)
	tc.checkAllocatedPublished(f.Pool)
	for _, n := range early {
		tc.deletePod(tc.ns, n)
	}
	tc.waitBoundCount(burst, 5)
	watch.check(t)
}

// checkAllocatedPublished fails the test if a device that a claim holds is
// missing from the pool's published slices.
func (tc *testContext) checkAllocatedPublished(pool string) {
	tc.t.Helper()
	_, published, err := publishedSeats(tc.ctx, pool)
	if err != nil {
		tc.t.Fatal(err)
	}
	claims, err := adminClient.ResourceV1().ResourceClaims(tc.ns).List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatal(err)
	}
	for _, c := range claims.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Pool == pool && !published[r.Device] {
				tc.t.Errorf("claim %s holds %s/%s, which is no longer published", c.Name, pool, r.Device)
			}
		}
	}
}

// TestLicensePodsUnderOurPlugins: pods that ask for seats are placed by our
// plugins as pods that do not: with NodeLessPods spreading and a node in a
// maintenance window, 12 pods, every other one with a seat, go 6 and 6 on
// the two open nodes, and the same 12 without seats go the same way.
func TestLicensePodsUnderOurPlugins(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(makeNode(tc.ns+"-a"), makeNode(tc.ns+"-b"), makeNode(tc.ns+"-c", withWindow(windowFrom(-time.Minute, time.Hour))))
	cfg, features := tc.licenseConfig("PLACED")
	f := features["PLACED"]
	tc.startLicenseController(cfg, newLicenseServer(map[string]int{"PLACED": 10}))
	tc.waitFreeSeats(f.Pool, 10)
	tc.startScheduler(schedulerConfig(profile("NodeLessPods", 3, nil, "PlacementPolicy", "MaintenanceWindow")))

	place := func(prefix string, withSeats bool) map[string]int {
		for i := range 12 {
			name := fmt.Sprintf("%s-%d", prefix, i)
			pod := tc.makePod(name)
			if withSeats && i%2 == 0 {
				pod = tc.licensePod(name, map[string]int64{f.ResourceName: 1})
			}
			pod.Labels["set"] = prefix
			tc.createPod(pod)
			tc.waitScheduled(name) // one at a time: each sees the last
		}
		return tc.podsPerNode(nodes, func(p *v1.Pod) bool { return p.Labels["set"] == prefix })
	}
	withSeats := place("seats", true)
	for _, n := range tc.boundPods() {
		tc.deletePod(tc.ns, n)
	}
	without := place("plain", false)
	want := map[string]int{nodes[0]: 6, nodes[1]: 6, nodes[2]: 0}
	if diff := cmp.Diff(want, withSeats); diff != "" {
		t.Errorf("pods with seats per node (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, without); diff != "" {
		t.Errorf("pods without seats per node (-want +got):\n%s", diff)
	}
}
