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

package didyoumean

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"nodelesspod", "nodelesspods", 1}, {"kitten", "sitting", 3},
		{"shpo", "shop", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"wbe", "web", 1}} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := EditDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"scenarios", []string{"config", "scenario", "timeout"}, "scenario"},
		{"REPLICAS", []string{"replica", "replicas"}, "replicas"},
		{"replica", []string{"replicas", "selector"}, "replicas"},
		{"defualt", []string{"team-a", "default"}, "default"},
		{"shpo", []string{"shop", "team-a"}, "shop"},
		{"zzzzzzzz", []string{"scenario", "config"}, ""},
		// One letter off in a two-letter name is half of it: not a typo.
		{"ab", []string{"xb"}, ""},
		{"x", nil, ""},
		// Ties go to the first in sorted order, whatever the order given.
		{"abcdef", []string{"abcdez", "abcdey"}, "abcdey"},
	} {
		if got := Closest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
