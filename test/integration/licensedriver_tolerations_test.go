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
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
)

// TestLicenseDriverBinaryToleratingClaims: the binary publishes a feature
// of 5 seats, 4 of them checked out on desktops. Three claims that tolerate
// every device taint (any key with Exists, the driver's key, an empty key
// with the NoSchedule effect), for 3, 3 and 1 seats, and a pod asking for 1
// seat in resources.limits get one seat between them: a claim's
// tolerations reach no seat the driver does not offer.
func TestLicenseDriverBinaryToleratingClaims(t *testing.T) {
	forEachDeviceMode(t, licenseDriverBinaryToleratingClaims)
}

func licenseDriverBinaryToleratingClaims(t *testing.T, devices config.Devices) {
	tc := newTestContext(t)
	tc.createNodes(makeNode(tc.ns+"-a"), makeNode(tc.ns+"-b"))
	server := tc.newHTTPLicenseServer(map[string]int{"TOL": 5})
	server.setInUse("TOL", 4)
	configPath, features := tc.binaryLicenseConfig(server, devices, "TOL")
	f := features["TOL"]
	tc.runLicenseDriverController("license-driver", configPath, "--leader-elect=false")
	tc.waitFreeSeats(f.Pool, 1)
	watch := tc.watchSeats(func() map[string]seatcheck.Truth { return server.truth(features) })
	tc.licenseScheduler()

	tolerations := [][]resourceapi.DeviceToleration{
		{{Operator: resourceapi.DeviceTolerationOpExists}},
		{{Key: "licenses.adminsched.io/unavailable", Operator: resourceapi.DeviceTolerationOpExists}},
		{{Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffectNoSchedule}},
	}
	var names []string
	for i, n := range []int64{3, 3, 1} {
		name := fmt.Sprintf("tolerant-%d", i)
		tc.createPod(tc.tolerantClaimPod(name, f.DeviceClassName, n, devices == config.Shared, tolerations[i]))
		names = append(names, name)
	}
	tc.createPod(tc.licensePod("limits", map[string]int64{f.ResourceName: 1}))
	names = append(names, "limits")
	// At most the one free seat: the pod asking for 1 seat, or the claim
	// for 1, whichever the scheduler tries first.
	bound := tc.waitBoundCount(names, 1)
	time.Sleep(3 * time.Second) // a poll or more: no second seat comes
	if peak := watch.check(t)[f.Pool]; peak != 1 {
		t.Errorf("%d seats held at most (bound: %v), want 1 of 5 with 4 checked out elsewhere", peak, bound)
	}
	// The desktops check in: the rest fit (3 + 3 + 1 + 1 = 8 > 5: not all).
	server.setInUse("TOL", 0)
	tc.waitFreeSeats(f.Pool, 0)
	watch.check(t)
}

// tolerantClaimPod creates a ResourceClaim for n seats of class whose
// request carries tolerations (as capacity of the one shared device when
// shared), and returns a pod that uses it.
func (tc *testContext) tolerantClaimPod(name, class string, n int64, shared bool, tolerations []resourceapi.DeviceToleration) *v1.Pod {
	tc.t.Helper()
	req := &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: n, Tolerations: tolerations}
	if shared {
		req.Count = 1
		req.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
			seats.SeatsCapacity: *resource.NewQuantity(n, resource.DecimalSI),
		}}
	}
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "seats", Exactly: req}}}},
	}
	if _, err := adminClient.ResourceV1().ResourceClaims(tc.ns).Create(tc.ctx, claim, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating claim %s: %v", name, err)
	}
	pod := tc.makePod(name)
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "seats", ResourceClaimName: ptr.To(name)}}
	pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "seats"}}
	return pod
}
