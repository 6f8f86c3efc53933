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

package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

const licensesHead = "nodes: [{name: a}]\n"

// TestLicenses: a licenses section and its steps decode into the driver's
// configuration, defaulted by the driver's own rules, and the steps keep
// their feature and count.
func TestLicenses(t *testing.T) {
	data := licensesHead + `
licenses:
  devices: Shared
  features:
    - {name: MATLAB, seats: 10, checkedOutElsewhere: 4}
    - {name: Distrib_Computing_Toolbox, pool: parallel, seats: 2}
steps:
  - licenses: {feature: MATLAB, checkedOutElsewhere: 2}
  - licenses: {feature: Distrib_Computing_Toolbox, checkedOutElsewhere: 0}
  - licenses: {feature: MATLAB, checkedOutElsewhere: 3}
`
	plan, err := decodePlan("s.yaml", []byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Licenses
	if c == nil {
		t.Fatal("no driver configuration")
	}
	if errs := config.Validate(c); len(errs) > 0 {
		t.Errorf("the configuration does not validate: %v", errs)
	}
	type feature struct {
		Name, Pool, ResourceName, DeviceClassName string
		Seats                                     int32
	}
	var got []feature
	for _, f := range c.Features {
		got = append(got, feature{f.Name, f.Pool, f.ResourceName, f.DeviceClassName, ptr.Deref(f.Seats, -1)})
	}
	want := []feature{
		{"MATLAB", "matlab", "licenses.adminsched.io/matlab", "matlab.licenses.adminsched.io", 10},
		{"Distrib_Computing_Toolbox", "parallel", "licenses.adminsched.io/parallel", "parallel.licenses.adminsched.io", 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("features (-want +got):\n%s", diff)
	}
	if c.PollInterval.Duration != time.Second || c.SettleWindow == nil || c.SettleWindow.Duration != 0 || c.Devices != config.Shared || c.MaxSeats != config.DefaultMaxSeats {
		t.Errorf("pollInterval %v, settleWindow %v, devices %q, maxSeats %d: want 1s, 0s, Shared, the default", c.PollInterval.Duration, c.SettleWindow, c.Devices, c.MaxSeats)
	}
	var steps []string
	for _, st := range plan.Steps {
		steps = append(steps, st.String())
	}
	wantSteps := []string{
		"set MATLAB seats checked out elsewhere from 4 to 2",
		"set Distrib_Computing_Toolbox seats checked out elsewhere from 0 to 0",
		"set MATLAB seats checked out elsewhere from 2 to 3",
	}
	if diff := cmp.Diff(wantSteps, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if got := plan.Scenario.Steps[0].String(); got != "set MATLAB seats checked out elsewhere to 2" {
		t.Errorf("the scenario's own step: %q, want it as written (the plan's copy knows where it starts)", got)
	}

	// More seats than the driver's default maxSeats: the configuration
	// allows them.
	plan, err = decodePlan("s.yaml", []byte(licensesHead+"licenses: {features: [{name: A, seats: 20000}, {name: B, seats: 5}]}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Licenses; c.MaxSeats != 20000 || len(config.Validate(c)) > 0 {
		t.Errorf("maxSeats %d, validation %v: want 20000 and valid", c.MaxSeats, config.Validate(c))
	}

	plan, err = decodePlan("s.yaml", []byte(licensesHead), nil)
	if err != nil || plan.Licenses != nil {
		t.Errorf("a scenario without licenses: configuration %v, error %v; want none", plan.Licenses, err)
	}
}

// TestLicensesErrors: every mistake of a licenses section or step is
// reported with its path in the scenario, all at once.
func TestLicensesErrors(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{
			name: "no features",
			data: "licenses: {}",
			want: []string{"s.yaml: licenses.features: Required value: at least one license feature"},
		},
		{
			name: "seats",
			data: "licenses: {features: [{name: A}, {name: B, seats: -1}, {name: C, seats: 100001}, {name: D, seats: 3, checkedOutElsewhere: 4}]}",
			want: []string{
				"licenses.features[0].seats: Required value: the seats the license server issued",
				"licenses.features[1].seats: Invalid value: -1: must be between 0 and 100000",
				"licenses.features[2].seats: Invalid value: 100001",
				"licenses.features[3].checkedOutElsewhere: Invalid value: 4: must be between 0 and the feature's seats, 3",
			},
		},
		{
			name: "names and pools",
			data: "licenses: {devices: Pooled, features: [{seats: 1}, {name: MATLAB, seats: 1}, {name: matlab, seats: 1}, {name: 'A B', seats: 1}, {name: X, pool: " + strings.Repeat("p", 64) + ", seats: 1}]}",
			want: []string{
				"licenses.features[0].name: Required value",
				`licenses.features[2].pool: Duplicate value: "matlab"`,
				`licenses.features[3].pool: Invalid value: "a b"`,
				`licenses.features[4].pool: Invalid value: "` + strings.Repeat("p", 64) + `": the pool makes the driver's resourceName licenses.adminsched.io/` + strings.Repeat("p", 64) + `, which is invalid`,
				`licenses.devices: Unsupported value: "Pooled": supported values: "Shared", "PerSeat"`,
			},
		},
		{
			name: "unknown field",
			data: "licenses: {features: [{name: A, seat: 1}]}",
			want: []string{`unknown field "licenses.features[0].seat"`},
		},
		{
			name: "a YAML 1.1 word",
			data: "licenses: {features: [{name: NO, seats: 1}]}",
			want: []string{"licenses.features[0].name: Invalid value: \"NO\": this unquoted value is a YAML 1.1 boolean"},
		},
		{
			name: "steps",
			data: `licenses: {features: [{name: A, seats: 2}]}
steps:
  - licenses: {feature: B, checkedOutElsewhere: 1}
  - licenses: {feature: A, checkedOutElsewhere: 3}
  - licenses: {feature: A}
  - licenses: {checkedOutElsewhere: 1}
  - {licenses: {feature: A, checkedOutElsewhere: 0}, wait: 1s}`,
			want: []string{
				`steps[0].licenses.feature: Unsupported value: "B": supported values: "A"`,
				"steps[1].licenses.checkedOutElsewhere: Invalid value: 3: must be between 0 and the feature's seats, 2",
				"steps[2].licenses.checkedOutElsewhere: Required value",
				"steps[3].licenses.feature: Required value",
				"steps[4]: Invalid value: 2: a step has exactly one of scale, delete, deleteNodes, wait, licenses",
			},
		},
		{
			name: "a step without licenses",
			data: "steps: [{licenses: {feature: A, checkedOutElsewhere: 1}}]",
			want: []string{"steps[0].licenses: Forbidden: the scenario declares no licenses"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodePlan("s.yaml", []byte(licensesHead+tt.data+"\n"), nil)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if n, want := strings.Count(err.Error(), "\n")+1, len(tt.want); n != want {
				t.Errorf("%d errors, want %d:\n%v", n, want, err)
			}
		})
	}
}

// TestLicensesBase: a base's licenses are taken (its errors name the
// base's file), and only one of the two files may have them.
func TestLicensesBase(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("base.yaml", licensesHead+"licenses: {features: [{name: MATLAB, seats: 3}]}\n")
	write("bad-base.yaml", licensesHead+"licenses: {features: [{name: MATLAB, seats: 3, checkedOutElsewhere: 5}]}\n")

	plan, err := loadPlan(write("top.yaml", "base: base.yaml\nsteps: [{licenses: {feature: MATLAB, checkedOutElsewhere: 1}}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Licenses == nil || plan.Licenses.Features[0].Name != "MATLAB" {
		t.Errorf("the base's licenses were not taken: %+v", plan.Licenses)
	}

	_, err = loadPlan(write("on-bad.yaml", "base: bad-base.yaml\n"), nil)
	if want := "bad-base.yaml: licenses.features[0].checkedOutElsewhere: Invalid value: 5"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}

	_, err = loadPlan(write("both.yaml", "base: base.yaml\nlicenses: {features: [{name: ANSYS, seats: 1}]}\n"), nil)
	if want := "both.yaml: licenses: Forbidden: the base " + filepath.Join(dir, "base.yaml") + " declares licenses too"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
