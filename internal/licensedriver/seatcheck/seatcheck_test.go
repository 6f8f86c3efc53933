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

package seatcheck

import (
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
)

func claim(name string, devices ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)}}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for _, d := range devices {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourceapi.DeviceRequestAllocationResult{Driver: licensedriver.DriverName, Pool: "cad", Device: d, Request: "r"})
	}
	return c
}

func pool(gen int64, devices ...string) []*resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{Spec: resourceapi.ResourceSliceSpec{
		Driver: licensedriver.DriverName,
		Pool:   resourceapi.ResourcePool{Name: "cad", Generation: gen, ResourceSliceCount: 1},
	}}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d})
	}
	return []*resourceapi.ResourceSlice{s}
}

func TestChecker(t *testing.T) {
	all := pool(1, "seat-0", "seat-1", "seat-2")
	truth := func(total, external int) map[string]Truth {
		return map[string]Truth{"cad": {Total: total, External: external}}
	}
	a, b := claim("a", "seat-0"), claim("b", "seat-1")
	steps := []struct {
		name    string
		state   State
		wantErr string
	}{
		{"one seat of 3, 1 outside", State{[]*resourceapi.ResourceClaim{a}, all, truth(3, 1)}, ""},
		{"the total falls under what is held: no new seat, no fault", State{[]*resourceapi.ResourceClaim{a}, all, truth(1, 1)}, ""},
		{"a seat given while full", State{[]*resourceapi.ResourceClaim{a, b}, all, truth(1, 1)}, "ns/b (seat-1) given a seat while 2 allocated + 1 checked out elsewhere > 1 issued"},
		{"held twice", State{[]*resourceapi.ResourceClaim{a, b, claim("c", "seat-1")}, all, truth(9, 0)}, "device seat-1 held by ns/b and ns/c"},
		{"withdrawn", State{[]*resourceapi.ResourceClaim{a, b}, pool(2, "seat-0"), truth(9, 0)}, "device seat-1 is allocated but no longer published"},
		{"an incomplete generation is not judged", State{[]*resourceapi.ResourceClaim{a, b}, append(pool(3, "seat-0"), pool(3)...)[:1], truth(9, 0)}, ""},
	}
	// The incomplete generation: two slices announced, one there.
	steps[5].state.Slices[0].Spec.Pool.ResourceSliceCount = 2
	var c Checker
	for _, s := range steps {
		err := c.Check(s.state)
		switch {
		case s.wantErr == "" && err != nil:
			t.Errorf("%s: %v", s.name, err)
		case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
			t.Errorf("%s: error %v, want %q", s.name, err, s.wantErr)
		}
	}
	if c.Peak["cad"] != 3 {
		t.Errorf("peak %d, want 3", c.Peak["cad"])
	}
}

func TestFree(t *testing.T) {
	offered := resourceapi.DeviceAttribute{BoolValue: ptr.To(true)}
	s := pool(1, "seat-0", "seat-1", "seat-2")
	for i := range s[0].Spec.Devices[:2] {
		s[0].Spec.Devices[i].Attributes = map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"offered": offered}
	}
	if got := Free("cad", s, []*resourceapi.ResourceClaim{claim("a", "seat-0")}); got != 1 {
		t.Errorf("free %d, want 1 (seat-1 offered and not held; seat-2 not offered)", got)
	}
}
