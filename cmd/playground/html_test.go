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
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/policytest"
	"github.com/adminsched/scheduler-plugins/internal/playground/report/htmlreport"
)

// TestHTMLFlagErrors: a --html that cannot be written is refused while
// the flags are parsed, naming the flag and the path, before anything
// runs (exit 2, nothing on stdout).
func TestHTMLFlagErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-dir", "r.html")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--html", missing}, `playground: invalid argument "` + missing + `" for "--html" flag: its directory ` + filepath.Dir(missing) + ` does not exist: create it first`},
		{[]string{"run", "--html", "-"}, `playground run: invalid argument "-" for "--html" flag: the report is a file, not stdout ("-"): stdout keeps the text or JSON output`},
		{[]string{"--html="}, `playground: invalid argument "" for "--html" flag: must not be empty`},
		{[]string{"--html", dir}, `playground: invalid argument "` + dir + `" for "--html" flag: ` + dir + ` is a directory: give a file`},
		{[]string{"test", "--html", "-", "x.yaml"}, `playground test: invalid argument "-" for "--html" flag: the report is a file, not stdout ("-")`},
		{[]string{"test", "--html", file, "x.yaml"}, `playground test: invalid argument "` + file + `" for "--html" flag: ` + file + ` is a file: give a directory`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, stderr := executeArgs(tt.args...)
			if code != exitInput || out != "" {
				t.Errorf("exit code %d, stdout %q; want %d and nothing", code, out, exitInput)
			}
			if !strings.HasPrefix(stderr, tt.want) {
				t.Errorf("stderr %q, want it to start with %q", stderr, tt.want)
			}
		})
	}
}

// TestHTMLFlags: what the HTML flags hold once parsed; an empty
// --html-group-by is no grouping, not an error.
func TestHTMLFlags(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args          []string
		html, groupBy string
	}{
		{args: nil, html: "", groupBy: defaultGroupBy},
		{args: []string{"--html", filepath.Join(dir, "r.html")}, html: filepath.Join(dir, "r.html"), groupBy: defaultGroupBy},
		{args: []string{"--html", filepath.Join(dir, "r.html"), "--html-group-by="}, html: filepath.Join(dir, "r.html"), groupBy: ""},
		{args: []string{"--html-group-by", "kubernetes.io/hostname"}, groupBy: "kubernetes.io/hostname"},
		{args: []string{"test", "--html", filepath.Join(dir, "made/later"), "--html-group-by="}, html: filepath.Join(dir, "made/later"), groupBy: ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd, args, err := newRootCommand().Find(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]string{"html": tt.html, "html-group-by": tt.groupBy} {
				if got := cmd.Flags().Lookup(name).Value.String(); got != want {
					t.Errorf("--%s = %q, want %q", name, got, want)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("parsing test --html made its directory (%v): only a test that runs does", err)
	}
}

// TestReportNames: a report per scenario file, named after it; files of
// the same base name (in other folders, or by case only) get distinct
// names in the order given.
func TestReportNames(t *testing.T) {
	got := reportNames([]string{
		"examples/scenarios/placement.yaml", "a/tutorial.yaml", "b/tutorial.yaml", "c/tutorial.yml",
		"tutorial-2.yaml", "d/Tutorial.json", "noext", "x.y.yaml",
	})
	want := []string{"placement.html", "tutorial.html", "tutorial-2.html", "tutorial-3.html", "tutorial-2-2.html", "Tutorial-4.html", "noext.html", "x.y.html"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// TestTestPage: each assertion is an expectation of the page, pass or
// fail with its message and the pods it concerned; all fail, with no pod,
// when the scenario could not run.
func TestTestPage(t *testing.T) {
	r := &policytest.FileResult{File: "dir/s.yaml", Outcomes: []policytest.Outcome{
		{Index: 0, Name: "spread", Passed: true, Pods: []string{"default/a"}, MorePods: 2, At: "after step 1 (scale)"},
		{Index: 1, Name: "in the US", Message: "2 of 6 pods are not on nodes us", Pods: []string{"default/a", "default/b"}, Failing: []string{"default/b"}, MoreFailing: 1, Other: "o.yaml"},
	}}
	got := testPage(r, nil, "zone")
	want := htmlreport.Page{Title: "s.yaml", GroupBy: "zone", Expectations: []htmlreport.Expectation{
		{Name: "expect[0] spread", Passed: true, Pods: []string{"default/a"}, MorePods: 2, At: "after step 1 (scale)"},
		{Name: "expect[1] in the US", Message: "2 of 6 pods are not on nodes us", Pods: []string{"default/a", "default/b"}, Failing: []string{"default/b"}, MoreFailing: 1, Other: "o.yaml"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	r.Err = errors.New("timed out")
	for _, e := range testPage(r, nil, "").Expectations {
		if e.Passed || e.Message != "the scenario could not run: timed out" || e.Pods != nil || e.Failing != nil {
			t.Errorf("%s: passed %v, message %q, pods %v %v; want a failure saying the scenario could not run, no pod", e.Name, e.Passed, e.Message, e.Pods, e.Failing)
		}
	}
}

// nodeColumn is what a person sees of a node's column in a report: its
// name and the titles (namespace/name) of the pod blocks stacked in it.
type nodeColumn struct {
	name string
	pods []string
}

var (
	nodeColumnRE = regexp.MustCompile(`(?s)<div class="node[ "].*?<span class="name">([^<]*)</span>.*?<div class="stack">(.*?)</div>`)
	podTitleRE   = regexp.MustCompile(`<a class="pod [^>]*title="([^"]*)"`)
)

// readReport reads an HTML report, checks what every report must have (a
// Content-Security-Policy that loads nothing, no network address) and
// returns it with its node columns in page order.
func readReport(t *testing.T, path string) (string, []nodeColumn) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	if fi.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("%s: mode %v, want it readable by all (0644 before the umask)", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	if want := `<meta http-equiv="Content-Security-Policy" content="default-src 'none';`; !strings.Contains(page, want) {
		t.Errorf("%s has no %s", path, want)
	}
	if m := regexp.MustCompile(`(src|href)="?(https?:)?//`).FindString(page); m != "" {
		t.Errorf("%s loads from the network: %s", path, m)
	}
	var columns []nodeColumn
	for _, m := range nodeColumnRE.FindAllStringSubmatch(page, -1) {
		c := nodeColumn{name: html.UnescapeString(m[1])}
		for _, p := range podTitleRE.FindAllStringSubmatch(m[2], -1) {
			c.pods = append(c.pods, html.UnescapeString(p[1]))
		}
		columns = append(columns, c)
	}
	return page, columns
}

// TestHTMLRun: --html on the tutorial writes, beside the unchanged JSON
// on stdout, a report with a column per node holding the very pods the
// JSON puts there: 3, 2 and 2.
func TestHTMLRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tutorial.html")
	code, out, stderr := runPlayground(t, "-o", "json", "--html", path)
	if code != exitOK {
		t.Fatalf("exit code %d, want %d", code, exitOK)
	}
	res := decodeResult(t, out) // stdout is the JSON document alone
	if !strings.Contains(stderr, "HTML report: "+path+"\n") {
		t.Errorf("stderr does not say where the report is:\n%s", stderr)
	}
	page, columns := readReport(t, path)
	if !strings.Contains(page, "<title>playground: tutorial.yaml</title>") {
		t.Errorf("the report's title is not the scenario's name")
	}
	want := make([]nodeColumn, len(res.Nodes))
	for i, n := range res.Nodes {
		want[i].name = n.Name
		for _, p := range res.Pods {
			if p.Node == n.Name {
				want[i].pods = append(want[i].pods, p.Namespace+"/"+p.Name)
			}
		}
		sort.Strings(want[i].pods)
	}
	var counts []int
	for _, c := range columns {
		sort.Strings(c.pods)
		counts = append(counts, len(c.pods))
	}
	if diff := cmp.Diff(want, columns, cmp.AllowUnexported(nodeColumn{})); diff != "" {
		t.Errorf("node columns (-JSON +HTML):\n%s", diff)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	if diff := cmp.Diff([]int{3, 2, 2}, counts); diff != "" {
		t.Errorf("pods per node column (-want +got):\n%s", diff)
	}
}

// TestHTMLPolicyTest: playground test --html makes the directory and
// writes a report per scenario, files of the same base name apart, with
// each assertion marked; the JUnit file names each report.
func TestHTMLPolicyTest(t *testing.T) {
	tmp := t.TempDir()
	base, err := filepath.Abs(tutorial)
	if err != nil {
		t.Fatal(err)
	}
	passing := filepath.Join(tmp, "a", "t.yaml")
	failing := filepath.Join(tmp, "b", "t.yaml")
	for path, expect := range map[string]string{
		passing: "[{name: spread by one at most, maxSpread: 1}]",
		failing: "[{name: two per node at most, maxPodsPerNode: 2}]", // 3 on one
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("base: "+base+"\nexpect: "+expect+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(tmp, "reports", "nested")
	junitFile := filepath.Join(tmp, "junit.xml")
	code, _, stderr := runTestCommand(t, "--html", dir, "--junit", junitFile, passing, failing)
	if code != exitTestFailed {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitTestFailed, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"t-2.html", "t.html"}, names); diff != "" {
		t.Fatalf("reports (-want +got):\n%s", diff)
	}
	reports := map[string]string{passing: filepath.Join(dir, "t.html"), failing: filepath.Join(dir, "t-2.html")}
	marks := map[string]string{
		passing: `<li class="pass"><b>expect[0] spread by one at most</b>`,
		failing: `<li class="fail"><b>expect[0] two per node at most</b>`,
	}
	// Every pod is selected: 7 marks; the third pod on the node of 3
	// broke the failing one.
	podMarks := map[string]map[string]int{
		passing: {`<span class="emark pass"`: 7, `broke"`: 0},
		failing: {`<span class="emark held"`: 6, `<span class="emark fail"`: 1, `broke"`: 1},
	}
	for file, report := range reports {
		page, columns := readReport(t, report)
		if !strings.Contains(page, marks[file]) {
			t.Errorf("%s lacks %s", report, marks[file])
		}
		stacks := ""
		for _, m := range nodeColumnRE.FindAllStringSubmatch(page, -1) {
			stacks += m[2]
		}
		for mark, want := range podMarks[file] {
			if got := strings.Count(stacks, mark); got != want {
				t.Errorf("%s: %d pod blocks with %s, want %d", report, got, mark, want)
			}
		}
		if len(columns) != 3 {
			t.Errorf("%s: %d node columns, want 3", report, len(columns))
		}
		if !strings.Contains(stderr, "HTML report: "+report+"\n") {
			t.Errorf("stderr does not name %s", report)
		}
	}
	j := readJUnit(t, junitFile)
	if len(j.Suites) != 2 {
		t.Fatalf("%d testsuites, want 2", len(j.Suites))
	}
	for _, s := range j.Suites {
		report := reports[s.Name]
		found := false
		for _, p := range s.Properties {
			found = found || p.Name == "html-report" && p.Value == report
		}
		if !found {
			t.Errorf("testsuite %s: no property html-report=%s in %+v", s.Name, report, s.Properties)
		}
		for _, c := range s.Cases {
			if want := "[[ATTACHMENT|" + report + "]]"; c.SystemOut != want {
				t.Errorf("testcase %s of %s: system-out %q, want %q", c.Name, s.Name, c.SystemOut, want)
			}
		}
	}
}
