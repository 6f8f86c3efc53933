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

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/playground/policytest"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/report/htmlreport"
)

// What playground test writes besides its text: the JUnit file and an
// HTML report per scenario file.

const htmlDirUsage = "also write an HTML report per scenario file to `DIR`, made if missing: the file's base name with .html for its .yaml, .yml or .json; a name already taken (two files named alike) gets -2, -3, … before .html, in the order given. The JUnit file (--junit) names each report: its testsuite's property html-report, and [[ATTACHMENT|path]] in each testcase's system-out, which GitLab (path relative to the project's directory) and Jenkins' JUnit Attachments plugin (absolute path) show as a link; the path is written as DIR gives it"

// reportNames names the HTML report of each of paths, in order: its base
// name with .html for its extension, and -2, -3, … before .html for a
// name already taken. Names are compared without case, for file systems
// that ignore it.
func reportNames(paths []string) []string {
	taken := map[string]bool{}
	names := make([]string, len(paths))
	for i, p := range paths {
		base := filepath.Base(p)
		stem := strings.TrimSuffix(base, filepath.Ext(base))
		name := stem + ".html"
		for n := 2; taken[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s-%d.html", stem, n)
		}
		taken[strings.ToLower(name)] = true
		names[i] = name
	}
	return names
}

// htmlReports makes --html's directory and returns the path of each
// file's report in it; none without --html.
func htmlReports(o *testFlags, files []*testFile) ([]string, error) {
	if o.html == "" {
		return nil, nil
	}
	if err := os.MkdirAll(string(o.html), 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	for i, t := range files {
		paths[i] = t.path
	}
	for i, name := range reportNames(paths) {
		paths[i] = filepath.Join(string(o.html), name)
	}
	return paths, nil
}

// testPage is the report of one file of playground test: its runs (the
// scenario's config, then its samePlacementsAs configs) and the outcome
// of each assertion with the pods it concerned, which the report marks
// on the first run's picture.
func testPage(r *policytest.FileResult, runs []report.Run, groupBy string) htmlreport.Page {
	p := htmlreport.Page{Title: filepath.Base(r.File), Runs: runs, GroupBy: groupBy}
	for _, o := range r.Outcomes {
		e := htmlreport.Expectation{Name: fmt.Sprintf("expect[%d] %s", o.Index, o.Name), Passed: o.Passed && r.Err == nil, Message: o.Message,
			Pods: o.Pods, MorePods: o.MorePods, Failing: o.Failing, MoreFailing: o.MoreFailing, At: o.At, Other: o.Other}
		if r.Err != nil {
			// Nothing was evaluated: no pod to mark.
			e = htmlreport.Expectation{Name: e.Name, Message: "the scenario could not run: " + r.Err.Error()}
		}
		p.Expectations = append(p.Expectations, e)
	}
	return p
}

// writeJUnitFile writes the results as JUnit XML to path.
func writeJUnitFile(path string, results []*policytest.FileResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := policytest.WriteJUnit(f, results); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
