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

package yaml11

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func TestYAML11BooleanWords(t *testing.T) {
	got := map[string]bool{}
	for _, w := range []string{
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
		"yEs", "YeS", "oN", "oFF", "nO", "ye", "yess", "t", "f", "1", "0", "enabled",
	} {
		j, err := yaml.YAMLToJSON([]byte("v: " + w))
		if err != nil {
			t.Fatal(err)
		}
		switch string(j) {
		case `{"v":true}`:
			got[w] = true
		case `{"v":false}`:
			got[w] = false
		}
	}
	if diff := cmp.Diff(words, got); diff != "" {
		t.Errorf("words sigs.k8s.io/yaml reads as booleans (-refused +decoder):\n%s", diff)
	}
}

func TestYAML11ErrorCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("nodes:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "- {name: a%d, labels: {gpu: yes}}\n", i)
	}
	errs := Check([]byte(b.String()))
	if len(errs) != maxErrors+1 {
		t.Fatalf("%d errors, want %d", len(errs), maxErrors+1)
	}
	if got, want := errs[maxErrors].Error(), "...: Invalid value: 30: more unquoted YAML 1.1 booleans"; got != want {
		t.Errorf("last error %q, want %q", got, want)
	}
}

// TestMayHoldYAML11Boolean: the pre-check skips only data without an
// ambiguous word, and does skip quoted ones.
func TestMayHoldYAML11Boolean(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{data: "name: n", want: true},
		{data: "n", want: true},
		{data: "[yes,no]", want: true},
		{data: `{"a":on}`, want: true},
		{data: "a:\n- Off\n", want: true},
		{data: "a: yes # comment", want: true},
		{data: "a: 'x' # yes", want: true}, // a comment: parsed, nothing found
		{data: `- {"name": "n", "labels": {"spot": "yes", "capacity-type": "on-demand", "x": "foo/no"}}`},
		{data: "name: 'n'\nb: \"off\""},
		{data: "capacity-type: on-demand\nzone: eu-west-1a\nnote: nothing\nenabled: true"},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			if got := mayHold([]byte(tt.data)); got != tt.want {
				t.Errorf("mayHold = %t, want %t", got, tt.want)
			}
		})
	}
}

// jsonLines is n lines of a snapshot's bound pods: JSON, every string
// quoted, so no word is ambiguous.
func jsonLines(n int) []byte {
	var b strings.Builder
	b.WriteString("boundPods:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {\"name\":\"web-%d\",\"nodeName\":\"node-%d\",\"labels\":{\"app\":\"web\",\"capacity-type\":\"on-demand\"}}\n", i, i%500)
	}
	return []byte(b.String())
}

// BenchmarkCheck compares the check on data with no ambiguous word (the
// pre-check answers) with the full walk the pre-check skips.
func BenchmarkCheck(b *testing.B) {
	data := jsonLines(5000)
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if errs := Check(data); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("full-walk", func(b *testing.B) {
		for b.Loop() {
			var doc yamlv3.Node
			if err := yamlv3.Unmarshal(data, &doc); err != nil {
				b.Fatal(err)
			}
			var errs field.ErrorList
			walk(&doc, nil, &errs)
		}
	})
}
