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

package source

import (
	"fmt"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// MaxJSONBytes caps the document of the http source.
const MaxJSONBytes = 4 << 20

// maxJSONErrors caps the errors reported for one document: a generator's bug
// repeats in every entry.
const maxJSONErrors = 20

// jsonDocument is what the http source reads:
//
//	{"features": [{"name": "MATLAB", "total": 10, "inUse": 3,
//	  "checkouts": [{"user": "u", "host": "h", "count": 1, "since": "2026-11-30T09:12:00Z"}]}]}
//
// Counts are pointers so that a missing one is an error, not a zero.
type jsonDocument struct {
	Features *[]jsonFeature `json:"features"`
}

type jsonFeature struct {
	Name      string         `json:"name"`
	Total     *int64         `json:"total"`
	InUse     *int64         `json:"inUse"`
	Checkouts []jsonCheckout `json:"checkouts,omitempty"`
}

type jsonCheckout struct {
	User  string     `json:"user,omitempty"`
	Host  string     `json:"host,omitempty"`
	Count *int64     `json:"count"`
	Since *time.Time `json:"since,omitempty"`
}

// ParseJSON decodes the http source's document strictly: unknown and
// duplicate fields, a missing count, a negative or too large one (above
// MaxCount), a feature named twice and checkouts that hold more seats than
// the feature has in use are errors with their path, and the whole document
// is refused (a program wrote it; its bug should show at once, not as some
// features quietly missing). inUse above total is kept, as the server says.
// now is the reading's time.
func ParseJSON(data []byte, now time.Time) (Reading, error) {
	if len(data) > MaxJSONBytes {
		return Reading{}, fmt.Errorf("the document has %d bytes, more than the %d MiB read", len(data), MaxJSONBytes>>20)
	}
	var doc jsonDocument
	strictErrs, err := kjson.UnmarshalStrict(data, &doc, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return Reading{}, fmt.Errorf("the document is not the JSON expected: %w", err)
	}
	var errs field.ErrorList
	if doc.Features == nil {
		errs = append(errs, field.Required(field.NewPath("features"), `a list, e.g. {"features": [{"name": "MATLAB", "total": 10, "inUse": 3}]}`))
	}
	out := Reading{Time: now}
	if doc.Features != nil {
		out.Features = make(map[string]Feature, len(*doc.Features))
	}
	first := map[string]int{}
	for i, jf := range deref(doc.Features) {
		p := field.NewPath("features").Index(i)
		f := Feature{}
		ok := true
		if jf.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "the feature's name on the license server"))
			ok = false
		} else if j, dup := first[jf.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (also features[%d])", jf.Name, j)))
			ok = false
		} else {
			first[jf.Name] = i
		}
		var e field.ErrorList
		f.Total, e = count(jf.Total, 0, p.Child("total"))
		errs, ok = append(errs, e...), ok && len(e) == 0
		f.InUse, e = count(jf.InUse, 0, p.Child("inUse"))
		errs, ok = append(errs, e...), ok && len(e) == 0
		held := 0
		for j, jc := range jf.Checkouts {
			cp := p.Child("checkouts").Index(j)
			n, e := count(jc.Count, 1, cp.Child("count"))
			errs, ok = append(errs, e...), ok && len(e) == 0
			held += n
			c := Checkout{User: jc.User, Host: jc.Host, Count: n}
			if jc.Since != nil {
				c.Since = *jc.Since
			}
			f.Checkouts = append(f.Checkouts, c)
		}
		if ok && held > f.InUse {
			errs = append(errs, field.Invalid(p.Child("checkouts"), held, fmt.Sprintf("the checkouts hold more seats than inUse (%d)", f.InUse)))
			ok = false
		}
		if ok {
			out.Features[jf.Name] = f
		}
		if len(errs) > maxJSONErrors {
			break
		}
	}
	if len(strictErrs)+len(errs) > 0 {
		all := strictErrs
		for _, e := range errs {
			all = append(all, e)
		}
		if len(all) > maxJSONErrors {
			all = append(all[:maxJSONErrors], fmt.Errorf("and %d more errors", len(all)-maxJSONErrors))
		}
		return Reading{}, utilerrors.NewAggregate(all)
	}
	return out, nil
}

// count checks a required count: min to MaxCount.
func count(v *int64, min int64, p *field.Path) (int, field.ErrorList) {
	switch {
	case v == nil:
		return 0, field.ErrorList{field.Required(p, fmt.Sprintf("a whole number from %d to %d", min, MaxCount))}
	case *v < min || *v > MaxCount:
		return 0, field.ErrorList{field.Invalid(p, *v, fmt.Sprintf("must be from %d to %d", min, MaxCount))}
	}
	return int(*v), nil
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}
