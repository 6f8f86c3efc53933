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

package seats

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourceinternal "k8s.io/kubernetes/pkg/apis/resource"
	resourcev1 "k8s.io/kubernetes/pkg/apis/resource/v1"
	"k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/utils/ptr"
)

// TestPlansPassAPIValidation: every slice a plan makes passes the API
// server's own validation of ResourceSlices (v1.37.2), for random pools in
// both modes: a slice the API server refuses is never published, and the
// pool keeps its last counts. The shared device's request policy must fit
// its capacity (a range of min 1 and step 1 needs a capacity of 2: seen
// refused on the API server with 1 seat free).
func TestPlansPassAPIValidation(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 41))
	for i := range 3000 {
		p := Pool{Name: "cad", Feature: "CAD", Known: r.IntN(8) > 0, Total: r.IntN(300), InUse: r.IntN(40)}
		if r.IntN(10) == 0 {
			p.Total = r.IntN(3)
		}
		for range r.IntN(6) {
			d := DeviceName(r.IntN(p.Total + 3))
			if r.IntN(2) == 0 {
				d = SharedDevice
			}
			p.Held = append(p.Held, Hold{Device: d, Since: now.Add(-time.Hour), Seats: 1 + r.IntN(2)})
		}
		for mode, compute := range map[string]func(Pool, time.Time, time.Duration) Plan{"PerSeat": Compute, "Shared": ComputeShared} {
			plan := compute(p, now, settle)
			for j, s := range Slices(plan.Devices) {
				if err := validate(fmt.Sprintf("cad-%d", j), s.Devices); err != nil {
					t.Fatalf("%s plan of %+v: slice %d refused: %v", mode, p, j, err)
				}
			}
		}
		if t.Failed() || i > 0 && testing.Short() && i > 300 {
			break
		}
	}
}

// validate runs the API server's validation of a ResourceSlice holding
// devices.
func validate(name string, devices []resourceapi.Device) error {
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   "licenses.adminsched.io",
			Pool:     resourceapi.ResourcePool{Name: "cad", ResourceSliceCount: 1},
			AllNodes: ptr.To(true),
			Devices:  devices,
		},
	}
	var internal resourceinternal.ResourceSlice
	if err := resourcev1.Convert_v1_ResourceSlice_To_resource_ResourceSlice(slice, &internal, nil); err != nil {
		return err
	}
	return validation.ValidateResourceSlice(&internal).ToAggregate()
}
