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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseJSON(t *testing.T) {
	now := at("2026-11-30 09:40")
	recorded, err := os.ReadFile(filepath.Join("testdata", "http-features.json"))
	if err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	many.WriteString(`{"features": [`)
	for i := range 30 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `{"name": "f%d", "total": -1, "inUse": 0}`, i)
	}
	many.WriteString("]}")

	for _, tc := range []struct {
		name    string
		in      string
		want    map[string]Feature
		wantErr string
	}{{
		name: "recorded",
		in:   string(recorded),
		want: map[string]Feature{
			"MATLAB": {Total: 10, InUse: 3, Checkouts: []Checkout{
				{User: "alice", Host: "node-7.cluster.example.com", Count: 1, Since: at("2026-11-30 09:12")},
				{User: "bob", Host: "ws-bob.example.com", Count: 2},
			}},
			"SIMULINK": {Total: 5},
			// Kept as the server says.
			"Overdrawn": {Total: 2, InUse: 3},
		},
	}, {
		name: "no features",
		in:   `{"features": []}`,
		want: map[string]Feature{},
	}, {
		name:    "features missing",
		in:      `{}`,
		wantErr: `features: Required value: a list, e.g. {"features": [{"name": "MATLAB", "total": 10, "inUse": 3}]}`,
	}, {
		name:    "null",
		in:      `null`,
		wantErr: `features: Required value: a list, e.g. {"features": [{"name": "MATLAB", "total": 10, "inUse": 3}]}`,
	}, {
		name:    "unknown field, with its path",
		in:      `{"features": [{"name": "A", "total": 1, "inUse": 0, "inuse": 0}]}`,
		wantErr: `unknown field "features[0].inuse"`,
	}, {
		name:    "duplicate field",
		in:      `{"features": [{"name": "A", "total": 1, "total": 2, "inUse": 0}]}`,
		wantErr: `duplicate field "features[0].total"`,
	}, {
		name:    "not JSON",
		in:      `features: []`,
		wantErr: "the document is not the JSON expected: invalid character 'e' in literal false (expecting 'a')",
	}, {
		name:    "a fraction",
		in:      `{"features": [{"name": "A", "total": 1.5, "inUse": 0}]}`,
		wantErr: "the document is not the JSON expected: json: cannot unmarshal number 1.5 into Go struct field jsonFeature.features.total of type int64",
	}, {
		name:    "missing counts and name",
		in:      `{"features": [{"checkouts": [{"user": "u"}]}]}`,
		wantErr: "[features[0].name: Required value: the feature's name on the license server, features[0].total: Required value: a whole number from 0 to 2147483647, features[0].inUse: Required value: a whole number from 0 to 2147483647, features[0].checkouts[0].count: Required value: a whole number from 1 to 2147483647]",
	}, {
		name:    "negative and absurd counts",
		in:      `{"features": [{"name": "A", "total": -1, "inUse": 99999999999, "checkouts": [{"count": 0}]}]}`,
		wantErr: "[features[0].total: Invalid value: -1: must be from 0 to 2147483647, features[0].inUse: Invalid value: 99999999999: must be from 0 to 2147483647, features[0].checkouts[0].count: Invalid value: 0: must be from 1 to 2147483647]",
	}, {
		name:    "duplicate feature",
		in:      `{"features": [{"name": "A", "total": 1, "inUse": 0}, {"name": "B", "total": 1, "inUse": 0}, {"name": "A", "total": 2, "inUse": 0}]}`,
		wantErr: `features[2].name: Duplicate value: "A (also features[0])"`,
	}, {
		name:    "checkouts holding more than in use",
		in:      `{"features": [{"name": "A", "total": 5, "inUse": 2, "checkouts": [{"count": 2}, {"count": 1}]}]}`,
		wantErr: "features[0].checkouts: Invalid value: 3: the checkouts hold more seats than inUse (2)",
	}, {
		name:    "errors are capped",
		in:      many.String(),
		wantErr: "and 1 more errors]",
	}, {
		name:    "too large",
		in:      `{"features": [` + strings.Repeat(" ", MaxJSONBytes) + `]}`,
		wantErr: "the document has 4194320 bytes, more than the 4 MiB read",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJSON([]byte(tc.in), now)
			if tc.name == "errors are capped" {
				if err == nil || !strings.HasSuffix(err.Error(), tc.wantErr) || strings.Count(err.Error(), "Invalid value") != maxJSONErrors {
					t.Fatalf("error %v, want %d errors then %q", err, maxJSONErrors, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				return
			}
			if diff := cmp.Diff(Reading{Features: tc.want, Time: now}, got); diff != "" {
				t.Errorf("reading (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseJSON checks what every accepted document must give: counts in
// range, checkouts of at least one seat holding no more than InUse, and the
// same answer twice; and that nothing panics.
func FuzzParseJSON(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "http-features.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"features": [{"name": "A", "total": 1, "inUse": 2, "checkouts": [{"count": 2, "since": "2026-01-01T00:00:00Z"}]}]}`))
	f.Add([]byte(`{"features": [{"name": "A", "total": 1, "inUse": 0}, {"name": "A", "total": 1, "inUse": 0}]}`))
	now := at("2026-11-30 09:40")
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseJSON(data, now)
		if err != nil {
			return
		}
		if !got.Time.Equal(now) || got.Features == nil || got.Unavailable != nil {
			t.Errorf("reading %+v: want time %v, a map of features, no unavailable", got, now)
		}
		for name, ft := range got.Features {
			if name == "" || ft.Total < 0 || ft.Total > MaxCount || ft.InUse < 0 || ft.InUse > MaxCount {
				t.Errorf("feature %q: total %d, in use %d: out of range", name, ft.Total, ft.InUse)
			}
			held := 0
			for _, c := range ft.Checkouts {
				if c.Count < 1 || c.Count > MaxCount {
					t.Errorf("feature %q: checkout %+v: count out of range", name, c)
				}
				held += c.Count
			}
			if held > ft.InUse {
				t.Errorf("feature %q: checkouts hold %d seats, more than the %d in use", name, held, ft.InUse)
			}
		}
		again, err := ParseJSON(data, now)
		if err != nil {
			t.Fatalf("second parse: %v", err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("second parse differs (-first +second):\n%s", diff)
		}
	})
}
