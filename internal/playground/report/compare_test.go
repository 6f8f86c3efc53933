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
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteCompare(t *testing.T) {
	other := Result{
		Nodes: []NodeResult{{Name: "tutorial-1", Pods: 1}, {Name: "tutorial-2", Pods: 2}, {Name: "tutorial-3", Pods: 2}},
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
}

func TestWriteCompareJSON(t *testing.T) {
	runs := []Run{{Config: "a.yaml", Result: Result{
		Nodes:  []NodeResult{{Name: "n1", Pods: 1}},
		Pods:   []PodResult{{Namespace: "default", Name: "p", Node: "n1"}},
		Spread: 0,
	}}}
	checkGolden(t, "compare", func(w io.Writer) error { return WriteCompareJSON(w, runs) })
}

// TestWriteCompareEveryPod: every pod of every run has a row, also the
// pods a later run made and the first did not (one more replica, an object
// only that run has pods of), lined up by object.
func TestWriteCompareEveryPod(t *testing.T) {
	first := Result{
		Nodes: []NodeResult{{Name: "n1", Pods: 2}, {Name: "n2", Pods: 0}},
		Pods: []PodResult{
			{Namespace: "default", Name: "web-abc", Object: "Deployment/web", Node: "n1"},
			{Namespace: "default", Name: "web-def", Object: "Deployment/web", Node: "n1"},
			{Namespace: "default", Name: "solo", Object: "Pod/solo", Reason: "Unschedulable"},
		},
	}
	second := Result{
		Nodes: []NodeResult{{Name: "n1", Pods: 2}, {Name: "n2", Pods: 3}},
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

func TestWriteCompareNoRuns(t *testing.T) {
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":         func(b *bytes.Buffer) error { return WriteCompareText(b, nil) },
		"explain text": func(b *bytes.Buffer) error { return WriteCompareExplainText(b, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("", b.String()); diff != "" {
				t.Errorf("output of no runs (-want +got):\n%s", diff)
			}
		})
	}
}
