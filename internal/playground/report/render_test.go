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

var fixed = Result{
	Nodes: []NodeResult{{Name: "tutorial-1", Pods: 3}, {Name: "tutorial-2", Pods: 2}, {Name: "tutorial-3", Pods: 0}},
	Pods: []PodResult{
		{Namespace: "default", Name: "test-pod-1", Node: "tutorial-1"},
		{Namespace: "default", Name: "test-pod-2", Node: "tutorial-2"},
		{Namespace: "team-a", Name: "big", Reason: "Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."},
	},
	Spread: 3,
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, fixed); err != nil {
		t.Fatal(err)
	}
	want := `pods per node:
  tutorial-1  ███ 3
  tutorial-2  ██ 2
  tutorial-3   0
pods:
  default/test-pod-1  -> tutorial-1
  default/test-pod-2  -> tutorial-2
  team-a/big          -> <none>: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.
spread (max-min pods per node): 3
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

func TestBar(t *testing.T) {
	tests := []struct {
		name           string
		count, largest int
		want           int // blocks
	}{
		{"empty", 0, 3, 0},
		{"unscaled", 3, 3, 3},
		{"at the limit", maxBar, maxBar, maxBar},
		{"scaled to the widest", 400, 400, maxBar},
		{"scaled half", 200, 400, maxBar / 2},
		{"never hides a non-empty node", 1, 400, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bar(tt.count, tt.largest)
			if diff := cmp.Diff(strings.Repeat("█", tt.want), got); diff != "" {
				t.Errorf("bar(%d, %d) (-want +got):\n%s", tt.count, tt.largest, diff)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	checkGolden(t, "result", resultJSON(fixed))
}

// TestWriteJSONSteps pins the field names of the steps, and that a result
// without steps has no "steps" field (TestWriteJSON).
func TestWriteJSONSteps(t *testing.T) {
	checkGolden(t, "steps", resultJSON(Result{
		Nodes:  []NodeResult{{Name: "n1", Pods: 1}},
		Pods:   []PodResult{{Namespace: "default", Name: "web-a", Object: "Deployment/web", Node: "n1"}},
		Steps:  []StepResult{{Step: "scale Deployment default/web to 1", Nodes: []NodeResult{{Name: "n1", Pods: 1}}}},
		Spread: 0,
	}))
}

func TestWriteTextEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, Result{}); err != nil {
		t.Fatal(err)
	}
	want := "pods per node:\npods:\nspread (max-min pods per node): 0\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}
