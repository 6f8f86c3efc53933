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

package playground

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSpread(t *testing.T) {
	tests := []struct {
		counts []int
		want   int
	}{
		{nil, 0},
		{[]int{4}, 0},
		{[]int{3, 2, 2}, 1},
		{[]int{0, 7, 1}, 7},
	}
	for _, tt := range tests {
		if got := Spread(tt.counts); got != tt.want {
			t.Errorf("Spread(%v) = %d, want %d", tt.counts, got, tt.want)
		}
	}
}

func TestCompute(t *testing.T) {
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	bound := func(ns, name, node string) *corev1.Pod {
		p := pod(ns, name)
		p.Spec.NodeName = node
		return p
	}
	unschedulable := pod("team", "d")
	unschedulable.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient cpu.",
	}}
	pods := []OwnedPod{
		{"Pod/a", bound("default", "a", "n1")},
		{"Deployment/web", bound("default", "web-x", "n1")},
		{"Deployment/web", bound("default", "web-y", "n2")},
		{"Job/d", unschedulable},
	}
	events := map[types.NamespacedName]string{{Namespace: "team", Name: "d"}: "0/3 nodes are available: 2 Insufficient cpu."}
	got := Compute([]string{"n1", "n2", "n3"}, pods, events)
	want := Result{
		Nodes: []NodeResult{{"n1", 2}, {"n2", 1}, {"n3", 0}},
		Pods: []PodResult{
			{Namespace: "default", Name: "a", Object: "Pod/a", Node: "n1"},
			{Namespace: "default", Name: "web-x", Object: "Deployment/web", Node: "n1"},
			{Namespace: "default", Name: "web-y", Object: "Deployment/web", Node: "n2"},
			{Namespace: "team", Name: "d", Object: "Job/d", Reason: "Unschedulable: 0/3 nodes are available: 3 Insufficient cpu. (last FailedScheduling event: 0/3 nodes are available: 2 Insufficient cpu.)"},
		},
		Spread: 2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compute (-want +got):\n%s", diff)
	}
}

var fixed = Result{
	Nodes: []NodeResult{{"tutorial-1", 3}, {"tutorial-2", 2}, {"tutorial-3", 0}},
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

func TestBarScales(t *testing.T) {
	if got := len([]rune(bar(400, 400))); got != maxBar {
		t.Errorf("bar(400, 400) has %d blocks, want %d", got, maxBar)
	}
	if got := len([]rune(bar(1, 400))); got != 1 {
		t.Errorf("bar(1, 400) has %d blocks, want 1 (never hide a non-empty node)", got)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, fixed); err != nil {
		t.Fatal(err)
	}
	want := `{
  "nodes": [
    {
      "name": "tutorial-1",
      "pods": 3
    },
    {
      "name": "tutorial-2",
      "pods": 2
    },
    {
      "name": "tutorial-3",
      "pods": 0
    }
  ],
  "pods": [
    {
      "namespace": "default",
      "name": "test-pod-1",
      "node": "tutorial-1"
    },
    {
      "namespace": "default",
      "name": "test-pod-2",
      "node": "tutorial-2"
    },
    {
      "namespace": "team-a",
      "name": "big",
      "reason": "Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."
    }
  ],
  "spread": 3
}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}
}

func TestWriteCompare(t *testing.T) {
	other := Result{
		Nodes: []NodeResult{{"tutorial-1", 1}, {"tutorial-2", 2}, {"tutorial-3", 2}},
		Pods: []PodResult{
			{Namespace: "default", Name: "test-pod-1", Node: "tutorial-3"},
			{Namespace: "default", Name: "test-pod-2", Node: "tutorial-2"},
			{Namespace: "team-a", Name: "big", Node: "tutorial-1"},
		},
		Spread: 1,
	}
	runs := []Run{{Config: "a.yaml", Result: fixed}, {Config: "b.yaml", Result: other}}
	var b bytes.Buffer
	if err := WriteCompareText(&b, runs); err != nil {
		t.Fatal(err)
	}
	want := `node        [1] a.yaml  [2] b.yaml
tutorial-1  ███ 3       █ 1
tutorial-2  ██ 2        ██ 2
tutorial-3   0          ██ 2
spread      3           1

pod                 [1] node    [2] node
default/test-pod-1  tutorial-1  tutorial-3
default/test-pod-2  tutorial-2  tutorial-2
team-a/big          <none>      tutorial-1
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("compare text (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := WriteCompareJSON(&b, runs[:1]); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("{\n  \"runs\": [\n    {\n      \"config\": \"a.yaml\",\n      \"result\": {\n        \"nodes\": [")) {
		t.Errorf("compare JSON starts with %q", b.String()[:min(b.Len(), 120)])
	}
}

// TestWriteCompareEveryPod: every pod of every run has a row, also the
// pods a later run made and the first did not (one more replica, an object
// only that run has pods of), lined up by object.
func TestWriteCompareEveryPod(t *testing.T) {
	first := Result{
		Nodes: []NodeResult{{"n1", 2}, {"n2", 0}},
		Pods: []PodResult{
			{Namespace: "default", Name: "web-abc", Object: "Deployment/web", Node: "n1"},
			{Namespace: "default", Name: "web-def", Object: "Deployment/web", Node: "n1"},
			{Namespace: "default", Name: "solo", Object: "Pod/solo", Reason: "Unschedulable"},
		},
	}
	second := Result{
		Nodes: []NodeResult{{"n1", 2}, {"n2", 3}},
		Pods: []PodResult{
			{Namespace: "default", Name: "web-ghi", Object: "Deployment/web", Node: "n1"},
			{Namespace: "default", Name: "web-jkl", Object: "Deployment/web", Node: "n2"},
			{Namespace: "default", Name: "web-mno", Object: "Deployment/web", Node: "n2"},
			{Namespace: "default", Name: "solo", Object: "Pod/solo", Node: "n1"},
			{Namespace: "batch", Name: "job-x", Object: "Job/job", Node: "n2"},
		},
	}
	var b bytes.Buffer
	if err := WriteCompareText(&b, []Run{{Config: "a.yaml", Result: first}, {Config: "b.yaml", Result: second}}); err != nil {
		t.Fatal(err)
	}
	_, pods, _ := strings.Cut(b.String(), "\n\n")
	want := `pod                        [1] node  [2] node
default/Deployment/web #1  n1        n1
default/Deployment/web #2  n1        n2
default/Deployment/web #3  -         n2
default/solo               <none>    n1
batch/job-x                -         n2
`
	if diff := cmp.Diff(want, pods); diff != "" {
		t.Errorf("compared pods (-want +got):\n%s", diff)
	}
}
