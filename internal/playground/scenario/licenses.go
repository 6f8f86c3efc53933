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
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// LicensePollInterval is how often the license driver's controller reads
// the playground's license server: the shortest the driver allows, so that
// a step's change shows within a second or two.
const LicensePollInterval = time.Second

// Licenses is a license server that the playground serves to the license
// driver's controller (cmd/license-driver), which it runs in-process: the
// controller creates a DeviceClass per feature and publishes its seats, as
// on a cluster, and pods ask for them with resources.limits
// (licenses.adminsched.io/<pool>: 1). Steps change the checkouts outside
// the cluster (LicensesStep).
type Licenses struct {
	// Features are the license features the server issues, one pool each.
	Features []LicenseFeature `json:"features"`
	// Devices is how the driver publishes the seats of every feature:
	// PerSeat (default) or Shared (see config.Devices).
	Devices config.Devices `json:"devices,omitempty"`
}

// LicenseFeature is one feature of the license server.
type LicenseFeature struct {
	// Name is the feature as the license server spells it (MATLAB).
	Name string `json:"name"`
	// Pool is the DRA pool of its seats; its default is Name in lower case
	// with '_' as '-', which also names the extended resource
	// (licenses.adminsched.io/<pool>) and the DeviceClass
	// (<pool>.licenses.adminsched.io).
	Pool string `json:"pool,omitempty"`
	// Seats are the seats the server issued, from 0 to config.MaxSeats.
	Seats *int32 `json:"seats"`
	// CheckedOutElsewhere are the seats checked out outside the cluster
	// (on desktops) when the run starts, from 0 to Seats; default 0.
	CheckedOutElsewhere *int32 `json:"checkedOutElsewhere,omitempty"`
}

// LicensesStep sets the seats of a feature checked out outside the cluster.
type LicensesStep struct {
	// Feature is a feature of the scenario's licenses, by name.
	Feature string `json:"feature"`
	// CheckedOutElsewhere is the new number, from 0 to the feature's seats.
	CheckedOutElsewhere *int32 `json:"checkedOutElsewhere"`

	// from is the number before the step, which the plan knows.
	from *int32
}

// DriverConfiguration is the license driver's configuration for l,
// defaulted with the driver's own defaults: l's features with their seats
// (maxSeats raised to the most of them when that is over its default),
// read every LicensePollInterval, with no settle window (the playground's
// server lists the outside checkouts, so none of its in-use seats is a
// pod's). Its source says static, which is what validates a configuration
// whose seats are given; the playground serves them itself.
func (l *Licenses) DriverConfiguration() *config.Configuration {
	c := &config.Configuration{
		TypeMeta:     metav1.TypeMeta{APIVersion: config.APIVersion, Kind: config.Kind},
		Source:       config.Source{Static: &config.StaticSource{}},
		PollInterval: metav1.Duration{Duration: LicensePollInterval},
		SettleWindow: &metav1.Duration{},
		Devices:      l.Devices,
	}
	for _, f := range l.Features {
		c.Features = append(c.Features, config.Feature{Name: f.Name, Pool: f.Pool, Seats: f.Seats})
		// The driver publishes up to maxSeats seats of a feature: as many
		// as the scenario issues, up to the most it allows.
		if n := ptr.Deref(f.Seats, 0); n > c.MaxSeats && n <= config.MaxSeats {
			c.MaxSeats = max(n, config.DefaultMaxSeats)
		}
	}
	config.SetDefaults(c)
	return c
}

// validateLicenses checks l as the driver checks its configuration, each
// error with its path in the scenario, and the outside checkouts against
// the seats.
func validateLicenses(l *Licenses) field.ErrorList {
	if l == nil {
		return nil
	}
	path := field.NewPath("licenses")
	var errs field.ErrorList
	for i, f := range l.Features {
		p := path.Child("features").Index(i)
		switch {
		case f.Seats == nil:
			errs = append(errs, field.Required(p.Child("seats"), "the seats the license server issued"))
		case *f.Seats < 0 || *f.Seats > config.MaxSeats:
			errs = append(errs, field.Invalid(p.Child("seats"), *f.Seats, fmt.Sprintf("must be between 0 and %d", config.MaxSeats)))
		default:
			errs = append(errs, validateElsewhere(f.CheckedOutElsewhere, *f.Seats, p.Child("checkedOutElsewhere"))...)
		}
	}
	cfg := l.DriverConfiguration()
	configErrs := config.Validate(cfg)
	// A pool that is wrong makes wrong names: report the pool alone, and a
	// missing name alone.
	poolWrong := map[string]bool{}
	for _, e := range configErrs {
		if feature, f, _ := strings.Cut(e.Field, "."); f == "pool" || (f == "name" && e.Type == field.ErrorTypeRequired) {
			poolWrong[feature] = true
		}
	}
	for _, e := range configErrs {
		c := *e
		// The configuration's paths are the scenario's under licenses, but
		// for the names the driver makes from the pool.
		feature, f, _ := strings.Cut(c.Field, ".")
		switch f {
		case "seats":
			continue // checked above, in the scenario's words
		case "pool":
			if i, ok := featureIndex(l, feature); ok && l.Features[i].Name == "" && l.Features[i].Pool == "" {
				continue // made from the missing name
			}
		case "resourceName", "deviceClassName":
			if poolWrong[feature] || c.Type == field.ErrorTypeDuplicate {
				continue // the pool's error says it, or its Duplicate
			}
			c.Field = feature + ".pool"
			if i, ok := featureIndex(l, feature); ok {
				c.BadValue = cfg.Features[i].Pool
			}
			c.Detail = fmt.Sprintf("the pool makes the driver's %s %v, which is invalid: %s", f, e.BadValue, e.Detail)
		}
		c.Field = path.String() + "." + c.Field
		errs = append(errs, &c)
	}
	return errs
}

// featureIndex is the index of the feature that a configuration's field
// path (features[3]) is about.
func featureIndex(l *Licenses, configField string) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(configField, "features[%d]", &i); err != nil || i < 0 || i >= len(l.Features) {
		return 0, false
	}
	return i, true
}

func validateElsewhere(n *int32, seats int32, p *field.Path) field.ErrorList {
	if n != nil && (*n < 0 || *n > seats) {
		return field.ErrorList{field.Invalid(p, *n, fmt.Sprintf("must be between 0 and the feature's seats, %d", seats))}
	}
	return nil
}

// validateLicensesStep checks a step's feature and count against l.
func validateLicensesStep(st *LicensesStep, l *Licenses, p *field.Path) field.ErrorList {
	if l == nil {
		return field.ErrorList{field.Forbidden(p, "the scenario declares no licenses: add a top-level licenses section")}
	}
	var errs field.ErrorList
	var feature *LicenseFeature
	names := make([]string, 0, len(l.Features))
	for i := range l.Features {
		names = append(names, l.Features[i].Name)
		if l.Features[i].Name == st.Feature {
			feature = &l.Features[i]
		}
	}
	switch {
	case st.Feature == "":
		errs = append(errs, field.Required(p.Child("feature"), "a feature of licenses.features, by name"))
	case feature == nil:
		errs = append(errs, field.NotSupported(p.Child("feature"), st.Feature, names))
	}
	switch {
	case st.CheckedOutElsewhere == nil:
		errs = append(errs, field.Required(p.Child("checkedOutElsewhere"), "the seats checked out outside the cluster from then on"))
	case feature != nil && feature.Seats != nil:
		errs = append(errs, validateElsewhere(st.CheckedOutElsewhere, *feature.Seats, p.Child("checkedOutElsewhere"))...)
	case *st.CheckedOutElsewhere < 0:
		errs = append(errs, field.Invalid(p.Child("checkedOutElsewhere"), *st.CheckedOutElsewhere, "must not be negative"))
	}
	return errs
}

// String is the step as its progress line shows it.
func (st *LicensesStep) String() string {
	to := ptr.Deref(st.CheckedOutElsewhere, 0)
	if st.from == nil {
		return fmt.Sprintf("set %s seats checked out elsewhere to %d", st.Feature, to)
	}
	return fmt.Sprintf("set %s seats checked out elsewhere from %d to %d", st.Feature, *st.from, to)
}

// withFrom returns the licenses steps of steps with the number each
// changes from, after l's start and the steps before; the others as they
// are.
func withFrom(steps []Step, l *Licenses) []Step {
	if l == nil {
		return steps
	}
	now := map[string]int32{}
	for _, f := range l.Features {
		now[f.Name] = ptr.Deref(f.CheckedOutElsewhere, 0)
	}
	out := make([]Step, len(steps))
	for i, st := range steps {
		if st.Licenses != nil {
			c := *st.Licenses
			c.from = ptr.To(now[c.Feature])
			now[c.Feature] = ptr.Deref(c.CheckedOutElsewhere, 0)
			st.Licenses = &c
		}
		out[i] = st
	}
	return out
}
