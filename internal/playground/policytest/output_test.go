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

package policytest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func results() []*FileResult {
	return []*FileResult{
		{File: "a.yaml", Config: "c.yaml", Time: 1500 * time.Millisecond, Outcomes: []Outcome{
			{Index: 0, Name: "ok", Passed: true},
			{Index: 1, Name: "bad <one>", Message: "1 of 1 pods are not on nodes eu", Details: "ns/p -> us\n  profile p, attempt 1: 1 feasible node(s)\n"},
		}},
		{File: "b.yaml", Config: "c.yaml", Err: errors.New("not every pod was bound"), Outcomes: []Outcome{{Index: 0, Name: "x"}}, HTMLReport: "reports/b.html"},
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	for _, r := range results() {
		if err := WriteText(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	want := `a.yaml (scheduler config c.yaml): 1 passed, 1 failed
  PASS  expect[0] ok
  FAIL  expect[1] bad <one>
        1 of 1 pods are not on nodes eu
        ns/p -> us
          profile p, attempt 1: 1 feasible node(s)

b.yaml (scheduler config c.yaml): ERROR, the scenario could not run: not every pod was bound
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// TestWriteJUnit parses the XML back as a CI system reads it.
func TestWriteJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, results()); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("parsing %s: %v", buf.String(), err)
	}
	want := junitSuites{
		XMLName: xml.Name{Local: "testsuites"}, Name: "playground test", Tests: 3, Failures: 1, Errors: 1, Time: "1.500",
		Suites: []junitSuite{
			{Name: "a.yaml", Tests: 2, Failures: 1, Time: "1.500", Properties: []junitProperty{{Name: "config", Value: "c.yaml"}}, Cases: []junitCase{
				{Name: "expect[0] ok", Classname: "a.yaml", Time: "0"},
				{Name: "expect[1] bad <one>", Classname: "a.yaml", Time: "0", Failure: &junitProblem{
					Message: "1 of 1 pods are not on nodes eu", Type: "AssertionFailed",
					Text: "1 of 1 pods are not on nodes eu\nns/p -> us\n  profile p, attempt 1: 1 feasible node(s)\n"}},
			}},
			{Name: "b.yaml", Tests: 1, Errors: 1, Time: "0.000", Properties: []junitProperty{{Name: "config", Value: "c.yaml"}, {Name: "html-report", Value: "reports/b.html"}}, Cases: []junitCase{
				{Name: "expect[0] x", Classname: "b.yaml", Time: "0", Error: &junitProblem{Message: "the scenario could not run", Type: "ScenarioError", Text: "not every pod was bound"},
					SystemOut: "[[ATTACHMENT|reports/b.html]]"},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JUnit (-want +got):\n%s", diff)
	}
}
