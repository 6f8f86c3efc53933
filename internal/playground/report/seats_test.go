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

package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestLicenseSeatsString: the seat line says whether the pod's seats are
// free and where every seat is; held and outside seats over the issued
// ones leave none free.
func TestLicenseSeatsString(t *testing.T) {
	tests := []struct {
		seats LicenseSeats
		want  string
	}{
		{LicenseSeats{Feature: "MATLAB", Requested: 1, Issued: 10, HeldByPods: 6, CheckedOutElsewhere: 4},
			"no free seat of feature MATLAB: 10 issued, 6 held by pods, 4 checked out elsewhere"},
		{LicenseSeats{Feature: "MATLAB", Requested: 1, Issued: 10, HeldByPods: 10, CheckedOutElsewhere: 3},
			"no free seat of feature MATLAB: 10 issued, 10 held by pods, 3 checked out elsewhere"},
		{LicenseSeats{Feature: "ANSYS", Requested: 2, Issued: 4, HeldByPods: 3},
			"1 free seat of feature ANSYS, the pod asks for 2: 4 issued, 3 held by pods, 0 checked out elsewhere"},
		{LicenseSeats{Feature: "ANSYS", Requested: 1, Issued: 4, HeldByPods: 1, CheckedOutElsewhere: 1},
			"2 free seats of feature ANSYS, the pod asks for 1: 4 issued, 1 held by pods, 1 checked out elsewhere"},
	}
	for _, tt := range tests {
		if got := tt.seats.String(); got != tt.want {
			t.Errorf("%+v:\n got %q\nwant %q", tt.seats, got, tt.want)
		}
	}
}

// TestExplanationSeatsText: a waiting pod's seat lines come after the
// nodes filtered out, one per feature.
func TestExplanationSeatsText(t *testing.T) {
	e := &Explanation{Profile: "custom-scheduler", Attempt: 3,
		Filtered: []FilterGroup{{Stage: "Filter", Plugin: "DynamicResources", Code: "UnschedulableAndUnresolvable", Reason: "cannot allocate all claims", Nodes: []string{"worker-1"}}},
		Seats: []LicenseSeats{
			{Feature: "MATLAB", Requested: 1, Issued: 10, HeldByPods: 6, CheckedOutElsewhere: 4},
			{Feature: "ANSYS", Requested: 1, Issued: 2, HeldByPods: 1},
		}}
	var b bytes.Buffer
	if err := WriteExplanation(&b, e, "  "); err != nil {
		t.Fatal(err)
	}
	want := `  profile custom-scheduler, attempt 3: 0 feasible node(s)
  filtered out:
    Filter DynamicResources  UnschedulableAndUnresolvable  cannot allocate all claims  worker-1
  seats: no free seat of feature MATLAB: 10 issued, 6 held by pods, 4 checked out elsewhere
  seats: 1 free seat of feature ANSYS, the pod asks for 1: 2 issued, 1 held by pods, 0 checked out elsewhere
`
	if got := b.String(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if strings.Count(b.String(), "seats:") != 2 {
		t.Error("want one seat line per feature")
	}
}
