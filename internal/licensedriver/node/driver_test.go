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

package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2/ktesting"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

const (
	matlabEnv = "LM_LICENSE_FILE=27000@licsrv.example.com"
	ansysEnv  = "ANSYSLMD_LICENSE_FILE=1055@ansys.example.com"
)

// testConfig has three features: two with an environment, one without.
func testConfig(t *testing.T) *config.Configuration {
	t.Helper()
	c, err := config.Decode([]byte(`
apiVersion: licenses.adminsched.io/v1alpha1
kind: LicenseDriverConfiguration
source: {static: {}}
features:
- name: MATLAB
  seats: 10
  env: {LM_LICENSE_FILE: "27000@licsrv.example.com"}
- name: ansys_cfd
  seats: 4
  env: {ANSYSLMD_LICENSE_FILE: "1055@ansys.example.com"}
- name: other
  pool: other-matlab
  seats: 2
  env: {LM_LICENSE_FILE: "27001@other.example.com"}
- name: plain
  seats: 1
`))
	if err != nil {
		t.Fatalf("test config: %v", err)
	}
	return c
}

func result(request, driver, pool, device string) resourceapi.DeviceRequestAllocationResult {
	return resourceapi.DeviceRequestAllocationResult{Request: request, Driver: driver, Pool: pool, Device: device}
}

func allocatedClaim(uid types.UID, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "claim-" + string(uid), UID: uid},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: results},
		}},
	}
}

// prepared is a comparable form of a PrepareResult.
type prepared struct {
	Err     string
	Devices []kubeletplugin.Device
}

func comparable(in map[types.UID]kubeletplugin.PrepareResult) map[types.UID]prepared {
	out := map[types.UID]prepared{}
	for uid, r := range in {
		p := prepared{Devices: r.Devices}
		if r.Err != nil {
			p.Err = r.Err.Error()
		}
		out[uid] = p
	}
	return out
}

// specEnv reads the CDI directory as file name -> the env of its device,
// checking that each file is one device named after its claim.
func specEnv(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, data := range listDir(t, dir) {
		spec := &cdispec.Spec{}
		dec := json.NewDecoder(strings.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(spec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(spec.Devices) != 1 || SpecFileName(types.UID(spec.Devices[0].Name)) != name || spec.Kind != CDIKind || spec.Version != CDIVersion {
			t.Fatalf("%s: not one %s device of version %s named after the file's claim: %s", name, CDIKind, CDIVersion, data)
		}
		out[name] = spec.Devices[0].ContainerEdits.Env
	}
	return out
}

func seat(request, pool, device string, cdi ...string) kubeletplugin.Device {
	return kubeletplugin.Device{Requests: []string{request}, PoolName: pool, DeviceName: device, CDIDeviceIDs: cdi}
}

func TestPrepareUnprepare(t *testing.T) {
	const (
		uidA = types.UID("0a0a0a0a-0000-4000-8000-00000000000a")
		uidB = types.UID("0b0b0b0b-0000-4000-8000-00000000000b")
	)
	other := "gpu.example.com"
	for _, tc := range []struct {
		name      string
		claims    []*resourceapi.ResourceClaim
		stale     []types.UID // spec files there before
		want      map[types.UID]prepared
		wantFiles map[string][]string
	}{
		{
			name:      "one seat",
			claims:    []*resourceapi.ResourceClaim{allocatedClaim(uidA, result("req-0", licensedriver.DriverName, "matlab", "seat-3"))},
			want:      map[types.UID]prepared{uidA: {Devices: []kubeletplugin.Device{seat("req-0", "matlab", "seat-3", CDIDeviceID(uidA))}}},
			wantFiles: map[string][]string{SpecFileName(uidA): {matlabEnv}},
		},
		{
			name: "two seats of one request: the CDI device once",
			claims: []*resourceapi.ResourceClaim{allocatedClaim(uidA,
				result("req-0", licensedriver.DriverName, "matlab", "seat-3"),
				result("req-0", licensedriver.DriverName, "matlab", "seat-4"))},
			want: map[types.UID]prepared{uidA: {Devices: []kubeletplugin.Device{
				seat("req-0", "matlab", "seat-3", CDIDeviceID(uidA)), seat("req-0", "matlab", "seat-4")}}},
			wantFiles: map[string][]string{SpecFileName(uidA): {matlabEnv}},
		},
		{
			name: "two subrequests of one request: the CDI device once",
			claims: []*resourceapi.ResourceClaim{allocatedClaim(uidA,
				result("req-0/big", licensedriver.DriverName, "matlab", "seat-3"),
				result("req-0/small", licensedriver.DriverName, "matlab", "seat-4"))},
			want: map[types.UID]prepared{uidA: {Devices: []kubeletplugin.Device{
				seat("req-0/big", "matlab", "seat-3", CDIDeviceID(uidA)), seat("req-0/small", "matlab", "seat-4")}}},
			wantFiles: map[string][]string{SpecFileName(uidA): {matlabEnv}},
		},
		{
			name: "two features in two requests, another driver's device ignored",
			claims: []*resourceapi.ResourceClaim{allocatedClaim(uidA,
				result("gpu", other, "node-1", "gpu-0"),
				result("req-0", licensedriver.DriverName, "matlab", "seat-0"),
				result("req-1", licensedriver.DriverName, "ansys-cfd", "seat-1"))},
			want: map[types.UID]prepared{uidA: {Devices: []kubeletplugin.Device{
				seat("req-0", "matlab", "seat-0", CDIDeviceID(uidA)), seat("req-1", "ansys-cfd", "seat-1", CDIDeviceID(uidA))}}},
			wantFiles: map[string][]string{SpecFileName(uidA): {ansysEnv, matlabEnv}},
		},
		{
			name: "unknown pool: an error for that claim only, naming the known pools",
			claims: []*resourceapi.ResourceClaim{
				allocatedClaim(uidA, result("req-0", licensedriver.DriverName, "matlab", "seat-0")),
				allocatedClaim(uidB, result("req-0", licensedriver.DriverName, "abaqus", "seat-0")),
			},
			want: map[types.UID]prepared{
				uidA: {Devices: []kubeletplugin.Device{seat("req-0", "matlab", "seat-0", CDIDeviceID(uidA))}},
				uidB: {Err: `claim ns/claim-` + string(uidB) + `: status.allocation.devices.results[0] (request "req-0", device seat-0): pool "abaqus" is not a license feature of this node's configuration (known pools: ansys-cfd, matlab, other-matlab, plain)`},
			},
			wantFiles: map[string][]string{SpecFileName(uidA): {matlabEnv}},
		},
		{
			name: "two features that set one variable differently",
			claims: []*resourceapi.ResourceClaim{allocatedClaim(uidA,
				result("req-0", licensedriver.DriverName, "matlab", "seat-0"),
				result("req-1", licensedriver.DriverName, "other-matlab", "seat-0"))},
			want:      map[types.UID]prepared{uidA: {Err: `claim ns/claim-` + string(uidA) + `: environment variable LM_LICENSE_FILE: pool "matlab" sets "27000@licsrv.example.com", pool "other-matlab" sets "27001@other.example.com"; one claim's seats must agree (ask for them in separate claims)`}},
			wantFiles: map[string][]string{},
		},
		{
			name:      "a feature without env: no CDI device, and a stale spec goes",
			claims:    []*resourceapi.ResourceClaim{allocatedClaim(uidA, result("req-0", licensedriver.DriverName, "plain", "seat-0"))},
			stale:     []types.UID{uidA},
			want:      map[types.UID]prepared{uidA: {Devices: []kubeletplugin.Device{seat("req-0", "plain", "seat-0")}}},
			wantFiles: map[string][]string{},
		},
		{
			name:      "only another driver's devices",
			claims:    []*resourceapi.ResourceClaim{allocatedClaim(uidA, result("gpu", other, "node-1", "gpu-0"))},
			want:      map[types.UID]prepared{uidA: {}},
			wantFiles: map[string][]string{},
		},
		{
			name:      "a UID that would leave the directory",
			claims:    []*resourceapi.ResourceClaim{allocatedClaim("../x", result("req-0", licensedriver.DriverName, "matlab", "seat-0"))},
			want:      map[types.UID]prepared{"../x": {Err: `claim ns/claim-../x: claim UID "../x": must be 1-63 letters, digits and '-', starting with a letter or digit`}},
			wantFiles: map[string][]string{},
		},
		{
			name:      "not allocated",
			claims:    []*resourceapi.ResourceClaim{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: uidA}}},
			want:      map[types.UID]prepared{uidA: {Err: "claim ns/c: not allocated"}},
			wantFiles: map[string][]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			dir := t.TempDir()
			for _, uid := range tc.stale {
				if err := os.WriteFile(filepath.Join(dir, SpecFileName(uid)), []byte(`{}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d := newDriver(testConfig(t), dir, func(err error) { t.Errorf("fatal: %v", err) })

			// Twice: the kubelet may prepare again after a restart.
			for round := 1; round <= 2; round++ {
				got, err := d.PrepareResourceClaims(ctx, tc.claims)
				if err != nil {
					t.Fatalf("prepare #%d: %v", round, err)
				}
				if diff := cmp.Diff(tc.want, comparable(got)); diff != "" {
					t.Errorf("prepare #%d (-want +got):\n%s", round, diff)
				}
				if diff := cmp.Diff(tc.wantFiles, specEnv(t, dir)); diff != "" {
					t.Errorf("CDI specs after prepare #%d (-want +got):\n%s", round, diff)
				}
			}

			// Unprepare each claim twice and one never seen: no error, no
			// file left.
			objs := []kubeletplugin.NamespacedObject{{UID: "0c0c0c0c-0000-4000-8000-00000000000c"}, {UID: "../x"}}
			for _, c := range tc.claims {
				objs = append(objs, kubeletplugin.NamespacedObject{UID: c.UID, NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
			}
			wantUnprepare := map[types.UID]error{}
			for _, o := range objs {
				wantUnprepare[o.UID] = nil
			}
			for round := 1; round <= 2; round++ {
				got, err := d.UnprepareResourceClaims(ctx, objs)
				if err != nil {
					t.Fatalf("unprepare #%d: %v", round, err)
				}
				if diff := cmp.Diff(wantUnprepare, got, cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })); diff != "" {
					t.Errorf("unprepare #%d (-want +got):\n%s", round, diff)
				}
				if diff := cmp.Diff(map[string]string{}, listDir(t, dir)); diff != "" {
					t.Errorf("CDI directory after unprepare #%d (-want +got):\n%s", round, diff)
				}
			}
		})
	}
}

func TestUnprepareLeavesOtherClaims(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	d := newDriver(testConfig(t), dir, func(err error) { t.Errorf("fatal: %v", err) })
	a, b := types.UID("a1"), types.UID("b2")
	if _, err := d.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{
		allocatedClaim(a, result("r", licensedriver.DriverName, "matlab", "s0")),
		allocatedClaim(b, result("r", licensedriver.DriverName, "ansys-cfd", "s1")),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.UnprepareResourceClaims(ctx, []kubeletplugin.NamespacedObject{{UID: a}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{SpecFileName(b): {ansysEnv}}, specEnv(t, dir)); diff != "" {
		t.Errorf("CDI specs (-want +got):\n%s", diff)
	}
}

func TestHandleError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantFatal string
	}{
		{name: "recoverable", err: fmt.Errorf("publish: %w", kubeletplugin.ErrRecoverable)},
		{name: "fatal", err: errors.New("listener closed"), wantFatal: "DRA gRPC server failed: listener closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var fatal string
			d := newDriver(testConfig(t), t.TempDir(), func(err error) { fatal = err.Error() })
			d.HandleError(ctx, tc.err, "DRA gRPC server failed")
			if diff := cmp.Diff(tc.wantFatal, fatal); diff != "" {
				t.Errorf("fatal (-want +got):\n%s", diff)
			}
		})
	}
}
