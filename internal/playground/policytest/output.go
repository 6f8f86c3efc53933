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
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// FileResult is what `playground test` found for one scenario file.
type FileResult struct {
	File string
	// Config is the scheduler config the scenario ran with.
	Config string
	// Outcomes are the assertions' outcomes, in file order. When the
	// scenario could not run they carry only their names.
	Outcomes []Outcome
	// Err says why the scenario could not run (the control plane, a
	// timeout); nil when it ran.
	Err  error
	Time time.Duration
	// HTMLReport is the path of the file's HTML report (playground test
	// --html), as written there; "" when none.
	HTMLReport string
}

// Counts returns how many assertions passed and failed; when the scenario
// could not run, none did either.
func (r *FileResult) Counts() (passed, failed int) {
	if r.Err != nil {
		return 0, 0
	}
	for _, o := range r.Outcomes {
		if o.Passed {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// WriteText writes one line per assertion, PASS or FAIL, and under each
// failure its message and the explanations of the pods it names.
func WriteText(w io.Writer, r *FileResult) error {
	passed, failed := r.Counts()
	if r.Err != nil {
		_, err := fmt.Fprintf(w, "%s (scheduler config %s): ERROR, the scenario could not run: %v\n", r.File, r.Config, r.Err)
		return err
	}
	fmt.Fprintf(w, "%s (scheduler config %s): %d passed, %d failed\n", r.File, r.Config, passed, failed)
	for _, o := range r.Outcomes {
		status := "PASS"
		if !o.Passed {
			status = "FAIL"
		}
		fmt.Fprintf(w, "  %s  expect[%d] %s\n", status, o.Index, o.Name)
		if o.Passed {
			continue
		}
		fmt.Fprintf(w, "        %s\n", o.Message)
		for _, line := range strings.Split(strings.TrimRight(o.Details, "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(w, "        %s\n", line)
			}
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// attachment is the line of a testcase's system-out that GitLab and
// Jenkins' JUnit Attachments plugin show as a link to the file: GitLab
// wants the path relative to the project's directory, Jenkins an absolute
// one, so the path is written as given.
func attachment(path string) string { return "[[ATTACHMENT|" + path + "]]" }

// WriteJUnit writes the results as JUnit XML: one testsuite per file, one
// testcase per assertion, a failure's message and explanations as its
// text; a file that could not run has an error in each testcase. A file's
// HTML report is its testsuite's property html-report and an attachment
// in each of its testcases' system-out.
func WriteJUnit(w io.Writer, results []*FileResult) error {
	all := junitSuites{Name: "playground test"}
	var total time.Duration
	for _, r := range results {
		s := junitSuite{Name: r.File, Time: seconds(r.Time), Properties: []junitProperty{{Name: "config", Value: r.Config}}}
		if r.HTMLReport != "" {
			s.Properties = append(s.Properties, junitProperty{Name: "html-report", Value: r.HTMLReport})
		}
		for _, o := range r.Outcomes {
			c := junitCase{Name: fmt.Sprintf("expect[%d] %s", o.Index, o.Name), Classname: r.File, Time: "0"}
			if r.HTMLReport != "" {
				c.SystemOut = attachment(r.HTMLReport)
			}
			switch {
			case r.Err != nil:
				c.Error = &junitProblem{Message: "the scenario could not run", Type: "ScenarioError", Text: r.Err.Error()}
				s.Errors++
			case !o.Passed:
				c.Failure = &junitProblem{Message: o.Message, Type: "AssertionFailed", Text: o.Message + "\n" + o.Details}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		total += r.Time
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
