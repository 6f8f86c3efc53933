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
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestREADMEJSONShape holds the JSON shape the scenarios README gives for
// `--output json` to the output's types: every field of Result, PodResult
// and NodeResult, and nothing else. It failed when the README left out
// "object" and "explain".
func TestREADMEJSONShape(t *testing.T) {
	data, err := os.ReadFile("../../../examples/scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(data)), " ")
	const intro = "`--output json` writes the same data: `"
	i := strings.Index(text, intro)
	if i < 0 {
		t.Fatalf("the scenarios README has no %q", intro)
	}
	shape, _, _ := strings.Cut(text[i+len(intro):], "`")
	var got []string
	for _, m := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(shape, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, v := range []any{Result{}, NodeResult{}, PodResult{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				want = append(want, name)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(slices.Compact(want), slices.Compact(got)); diff != "" {
		t.Errorf("the README's JSON shape %s (-the output's fields, +the README's):\n%s", shape, diff)
	}
}
