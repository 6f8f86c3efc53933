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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestExpandPlaceholders: each placeholder becomes now plus its offset, in
// UTC, to the second, in RFC 3339; the rest of the value is kept.
func TestExpandPlaceholders(t *testing.T) {
	// A time that is neither UTC nor on a second.
	now := time.Date(2031, time.March, 4, 9, 15, 30, 750_000_000, time.FixedZone("CET", 3600))
	tests := []struct {
		value string
		want  string
	}{
		{value: "", want: ""},
		{value: "no placeholder", want: "no placeholder"},
		{value: "${now}", want: "2031-03-04T08:15:30Z"},
		{value: "${now+2h}", want: "2031-03-04T10:15:30Z"},
		{value: "${now-30m}", want: "2031-03-04T07:45:30Z"},
		{value: "${now+1h30m}", want: "2031-03-04T09:45:30Z"},
		{value: "${now+48h}", want: "2031-03-06T08:15:30Z"},
		{value: "${now+90s}", want: "2031-03-04T08:17:00Z"},
		{value: "${now-0s}", want: "2031-03-04T08:15:30Z"},
		{
			value: "${now+1h}/${now+3h},2030-01-01T00:00:00Z/2030-01-01T02:00:00Z",
			want:  "2031-03-04T09:15:30Z/2031-03-04T11:15:30Z,2030-01-01T00:00:00Z/2030-01-01T02:00:00Z",
		},
		{value: "costs $5 {or} $ {now}", want: "costs $5 {or} $ {now}"},
		{value: "${now}}", want: "2031-03-04T08:15:30Z}"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := expandPlaceholders(tt.value, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("expanded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlaceholderEscape: "$$" is one "$" and starts no placeholder;
// escapePlaceholders' output expands to its input.
func TestPlaceholderEscape(t *testing.T) {
	now := time.Date(2031, time.March, 4, 9, 15, 30, 0, time.UTC)
	tests := []struct {
		value string
		want  string
	}{
		{value: "$${now}", want: "${now}"},
		{value: "$$${now}", want: "$2031-03-04T09:15:30Z"},
		{value: "$$$$", want: "$$"},
		{value: "a$$", want: "a$"},
		{value: "$", want: "$"},
		{value: "$x$", want: "$x$"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := expandPlaceholders(tt.value, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("expanded (-want +got):\n%s", diff)
			}
			back, err := expandPlaceholders(EscapePlaceholders(tt.value), now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.value, back); diff != "" {
				t.Errorf("escaped, then expanded (-want +got):\n%s", diff)
			}
		})
	}
}
