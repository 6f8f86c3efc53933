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
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// The license driver's binary on the test cluster: `license-driver
// controller` processes with an http source the test serves. The
// controller's logic is tested in-process in licenses_test.go; these tests
// cover what only the binary does: leader election on a Lease, the http
// source end to end, /metrics.

// leaseFlags make a failover take about 2 s.
var leaseFlags = []string{
	"--leader-elect-lease-duration=2s",
	"--leader-elect-renew-deadline=1500ms",
	"--leader-elect-retry-period=250ms",
}

// TestLicenseDriverBinaryLeaderFailover: two controllers elect a leader on a
// Lease of the test; only the leader publishes. The leader is killed
// (SIGKILL) while pods wait for seats: the other takes over, republishes,
// withdraws no allocated device, counts the seats right and follows the
// license server, and the burst completes as pods end. A watch of the
// claims checks all along that no more seats are held than issued and none
// twice. Both ways of publishing seats.
func TestLicenseDriverBinaryLeaderFailover(t *testing.T) {
	forEachDeviceMode(t, licenseDriverBinaryLeaderFailover)
}

func licenseDriverBinaryLeaderFailover(t *testing.T, devices config.Devices) {
	tc := newTestContext(t)
	tc.createNodes(makeNode(tc.ns+"-a"), makeNode(tc.ns+"-b"))
	server := tc.newHTTPLicenseServer(map[string]int{"FAIL": 8})
	configPath, features := tc.binaryLicenseConfig(server, devices, "FAIL")
	f := features["FAIL"]
	leaseArgs := append([]string{"--leader-elect", "--leader-elect-resource-namespace=" + tc.ns}, leaseFlags...)
	drivers := []*driverProcess{
		tc.runLicenseDriverController("license-driver-1", configPath, leaseArgs...),
		tc.runLicenseDriverController("license-driver-2", configPath, leaseArgs...),
	}
	leader, follower := tc.waitLicenseLeader(drivers)
	tc.waitFreeSeats(f.Pool, 8)
	if strings.Contains(follower.Output(), "Leading:") {
		t.Fatalf("%s is not the leader but publishes", follower.Name)
	}
	// Only the leader reports seats: a dashboard summing replicas counts
	// each seat once.
	tc.waitMetrics(leader, map[string]float64{seatsSeries(f.Pool, "total"): 8})
	tc.waitMetrics(follower, map[string]float64{seatsSeries(f.Pool, "total"): -1})
	holder := tc.leaseHolder("")
	watch := tc.watchSeats(func() map[string]seatcheck.Truth { return server.truth(features) })
	tc.licenseScheduler()

	names := tc.createLicensePods("job", 24, map[string]int64{f.ResourceName: 1})
	tc.waitBoundAtLeast(names, 8)
	// Mid-burst: 4 pods end, 16 wait, and the leader dies.
	ran := sets.New(tc.boundPods()...)
	for _, n := range sets.List(ran)[:4] {
		tc.deletePod(tc.ns, n)
	}
	killed := time.Now()
	leader.Kill()
	tc.waitLog(follower, "License driver controller started")
	t.Logf("%s took over and started %v after %s was killed", follower.Name, time.Since(killed).Round(10*time.Millisecond), leader.Name)
	if newHolder := tc.leaseHolder(holder); newHolder == holder {
		t.Errorf("the Lease is still held by %s", holder)
	}

	// The new leader follows the license server: one more seat is issued.
	// Then the 4 freed seats and the new one are held by waiting pods
	// (deleted pods are not counted as bound), the new leader publishes
	// none free, and every allocated device.
	//
	// The new seat also makes the scheduler retry its waiting pods: with a
	// shared device, freed capacity changes no ResourceSlice, and a
	// claim's deallocation alone was seen to leave a seat unused here (the
	// pods were not retried for a minute, 2 runs in 5).
	server.setTotal("FAIL", 9)
	tc.waitBoundAtLeast(names, 9)
	tc.waitFreeSeats(f.Pool, 0)
	tc.checkAllocatedPublished(f.Pool)
	tc.waitMetrics(follower, map[string]float64{
		seatsSeries(f.Pool, "total"):     9,
		seatsSeries(f.Pool, "allocated"): 9,
		seatsSeries(f.Pool, "free"):      0,
		seatsSeries(f.Pool, "external"):  0,
	})

	// The burst completes as pods end.
	err := wait.PollUntilContextTimeout(tc.ctx, 200*time.Millisecond, 2*waitTimeout, true, func(context.Context) (bool, error) {
		tc.checkAllocatedPublished(f.Pool)
		for _, n := range tc.boundPods() {
			ran.Insert(n)
			tc.deletePod(tc.ns, n)
		}
		return ran.Len() == len(names), nil
	})
	if err != nil {
		t.Fatalf("%d of %d pods got a seat: %v", ran.Len(), len(names), err)
	}
	tc.waitFreeSeats(f.Pool, 9)
	if peak := watch.check(t)[f.Pool]; peak != 9 {
		t.Errorf("at most %d seats were held at once, want all 9 used", peak)
	}

	// SIGTERM, as a kubelet stops a pod: the leader exits cleanly and
	// releases the Lease, so that a successor need not wait for it.
	follower.Stop()
	if code := follower.ProcessState().ExitCode(); code != 0 {
		t.Errorf("%s exited with %d on SIGTERM, want 0", follower.Name, code)
	}
	// The Lease's "stopped leading" event is recorded after SIGTERM.
	if strings.Contains(follower.Output(), "Unable to record event") {
		t.Errorf("%s could not record an event while stopping", follower.Name)
	}
	lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, "license-driver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the Lease is still held by %s after its leader stopped", *h)
	}
}

// waitLicenseLeader waits until one of two drivers leads, and returns it
// and the other.
func (tc *testContext) waitLicenseLeader(drivers []*driverProcess) (leader, follower *driverProcess) {
	tc.t.Helper()
	processes := make([]*framework.Process, len(drivers))
	for i, d := range drivers {
		processes[i] = d.Process
	}
	first := tc.waitForLeader(processes)
	for _, d := range drivers {
		if d.Process == first {
			leader = d
		}
	}
	follower = drivers[0]
	if follower == leader {
		follower = drivers[1]
	}
	return leader, follower
}

// leaseHolder waits until the test's Lease is held by someone other than
// not, and returns the holder.
func (tc *testContext) leaseHolder(not string) string {
	tc.t.Helper()
	holder := ""
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(ctx, "license-driver", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return holder != "" && holder != not, nil
	})
	if err != nil {
		tc.t.Fatalf("the Lease %s/license-driver is held by %q: %v", tc.ns, holder, err)
	}
	return holder
}

// waitBoundAtLeast waits until at least n of names are bound.
func (tc *testContext) waitBoundAtLeast(names []string, n int) {
	tc.t.Helper()
	got := 0
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		got = 0
		for _, b := range tc.boundPods() {
			if slices.Contains(names, b) {
				got++
			}
		}
		return got >= n, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d of %d pods to be bound (%d are): %v", n, len(names), got, err)
	}
}

// TestLicenseDriverBinarySourceChanges: the license server's in-use count
// rises ten times; each time the published free seats follow within a poll
// interval (1 s here), and the time from the change to the ResourceSlice
// update is logged. Then /metrics matches what is published.
func TestLicenseDriverBinarySourceChanges(t *testing.T) {
	tc := newTestContext(t)
	server := tc.newHTTPLicenseServer(map[string]int{"CHANGE": 20})
	configPath, features := tc.binaryLicenseConfig(server, "", "CHANGE")
	f := features["CHANGE"]
	slicesOf := tc.watchSlices(f.Pool)
	driver := tc.runLicenseDriverController("license-driver", configPath, "--leader-elect=false")
	tc.waitFree(slicesOf, 20, time.Now())

	var latencies, fromRead []time.Duration
	for inUse := 1; inUse <= 10; inUse++ {
		// Change at a different phase of the poll each time: right after
		// an update, the next read is a whole interval away.
		time.Sleep(time.Duration(inUse-1) * 100 * time.Millisecond)
		changed := time.Now()
		server.setInUse("CHANGE", inUse)
		published := tc.waitFree(slicesOf, 20-inUse, changed)
		latencies = append(latencies, published.Sub(changed))
		read, ok := server.readAfter(changed)
		if !ok || read.After(published) {
			t.Fatalf("change %d: the slices changed at %v, before the server was read", inUse, published)
		}
		fromRead = append(fromRead, published.Sub(read))
	}
	summary := func(d []time.Duration) string {
		d = slices.Clone(d)
		slices.Sort(d)
		return fmt.Sprintf("min %v, median %v, max %v", d[0].Round(time.Millisecond), d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
	t.Logf("time from a source change to the slice update over %d changes at 10 phases of the 1s poll: %s; from the read that saw it: %s",
		len(latencies), summary(latencies), summary(fromRead))
	slices.Sort(latencies)
	// A change is read at the next poll: never later than one interval,
	// plus the time to publish.
	if slow := latencies[len(latencies)-1]; slow > 3*time.Second {
		t.Errorf("a source change took %v to reach the ResourceSlices, want within the poll interval of 1s (and publishing)", slow)
	}

	tc.waitFreeSeats(f.Pool, 10)
	tc.waitMetrics(driver, map[string]float64{
		seatsSeries(f.Pool, "total"):     20,
		seatsSeries(f.Pool, "allocated"): 0,
		seatsSeries(f.Pool, "external"):  10,
		seatsSeries(f.Pool, "free"):      10,
		seatsSeries(f.Pool, "blocked"):   10,
		"license_driver_source_stale":    0,
	})
}

// TestLicenseDriverBinarySourceErrors: the license server answers 500. Each
// failed read counts in license_driver_source_reads_total{result="error"};
// past staleAfter (3 s) the driver fails closed (no seat free, source_stale
// 1); when the server answers again, the seats come back.
func TestLicenseDriverBinarySourceErrors(t *testing.T) {
	tc := newTestContext(t)
	server := tc.newHTTPLicenseServer(map[string]int{"DOWN": 4})
	configPath, features := tc.binaryLicenseConfig(server, "", "DOWN")
	f := features["DOWN"]
	driver := tc.runLicenseDriverController("license-driver", configPath, "--leader-elect=false")
	tc.waitFreeSeats(f.Pool, 4)
	body := tc.waitMetrics(driver, map[string]float64{seatsSeries(f.Pool, "free"): 4, "license_driver_source_stale": 0})
	errorSeries := `license_driver_source_reads_total{result="error"}`
	errorsBefore := max(metricValue(body, errorSeries), 0) // absent until the first error

	server.setStatus(http.StatusInternalServerError)
	tc.waitFreeSeats(f.Pool, 0)
	tc.waitMetrics(driver, map[string]float64{
		seatsSeries(f.Pool, "free"):   0,
		"license_driver_source_stale": 1,
	})
	tc.waitLog(driver, "status 500 Internal Server Error")

	server.setStatus(0)
	tc.waitFreeSeats(f.Pool, 4)
	tc.waitLog(driver, "The license server answers again")
	// No read fails any more: every 500 served is counted, once.
	failed := server.failed()
	tc.waitMetrics(driver, map[string]float64{
		seatsSeries(f.Pool, "free"):   4,
		"license_driver_source_stale": 0,
		errorSeries:                   errorsBefore + float64(failed),
	})
	if failed == 0 {
		t.Errorf("the driver went stale without a failed read")
	}
	t.Logf("%d reads failed before the source was stale", failed)
}
