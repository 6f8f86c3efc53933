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

	"github.com/google/go-cmp/cmp"
)

// TestWriteCompareExplainTextEveryPod: runs that made different pods (one
// more replica in the second, fewer in the first) are written pod by pod,
// every pod of every run, without indexing past a shorter run.
func TestWriteCompareExplainTextEveryPod(t *testing.T) {
	first := Result{Pods: []PodResult{
		{Namespace: "default", Name: "web-a", Object: "Deployment/web", Node: "n1"},
	}}
	second := Result{Pods: []PodResult{
		{Namespace: "default", Name: "web-b", Object: "Deployment/web", Node: "n2"},
		{Namespace: "default", Name: "web-c", Object: "Deployment/web", Node: "n1"},
		{Namespace: "default", Name: "solo", Object: "Pod/solo", Node: "n2"},
	}}
	for _, runs := range [][]Run{
		{{Config: "a.yaml", Result: first}, {Config: "b.yaml", Result: second}},
		{{Config: "b.yaml", Result: second}, {Config: "a.yaml", Result: first}},
	} {
		t.Run(runs[0].Config+" first", func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCompareExplainText(&b, runs); err != nil {
				t.Fatal(err)
			}
			_, got, _ := strings.Cut(b.String(), explainLegend+"\n")
			n1, n2 := "[1] "+runs[0].Config, "[2] "+runs[1].Config
			node := func(r Run, k int) string {
				if k >= len(r.Result.Pods) {
					return "-"
				}
				return r.Result.Pods[k].Node
			}
			want := "\ndefault/Deployment/web #1\n  " + n1 + " -> " + node(runs[0], 0) + "\n  " + n2 + " -> " + node(runs[1], 0) + "\n" +
				"\ndefault/Deployment/web #2\n  " + n1 + " -> " + node(runs[0], 1) + "\n  " + n2 + " -> " + node(runs[1], 1) + "\n" +
				"\ndefault/solo\n"
			for i, r := range runs {
				if len(r.Result.Pods) == 3 {
					want += "  [" + string(rune('1'+i)) + "] " + r.Config + " -> n2\n"
				} else {
					want += "  [" + string(rune('1'+i)) + "] " + r.Config + " -> -\n"
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("explanations (-want +got):\n%s", diff)
			}
		})
	}
}
