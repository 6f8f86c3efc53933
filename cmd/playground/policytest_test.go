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
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// runTestCommand runs `playground test` with the test's assets and returns
// the exit code, stdout and stderr.
func runTestCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := execute(context.Background(), append(append([]string{"test", "--assets", assets}, deschedulerArgs()...), args...), &stdout, &stderr)
	t.Logf("playground test %s: exit %d in %v\nstdout:\n%s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), stdout.String())
	return code, stdout.String(), stderr.String()
}

// junit is what a CI system reads of the JUnit file.
type junit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junit
	if err := xml.Unmarshal(data, &j); err != nil {
		t.Fatalf("parsing %s: %v\n%s", path, err, data)
	}
	return j
}

// shippedPolicyTests are the shipped scenarios that carry expect.
func shippedPolicyTests(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, glob := range []string{scenarios + "*.yaml", scenarios + "policy/*.yaml"} {
		matches, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range matches {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if regexp.MustCompile(`(?m)^expect:`).Match(data) {
				files = append(files, f)
			}
		}
	}
	if len(files) < 8 {
		t.Fatalf("only %d shipped scenarios with expect: %v", len(files), files)
	}
	return files
}

// TestPolicyTestExamples: every shipped expectation holds (README,
// "Policy tests"), and the JUnit file says so.
func TestPolicyTestExamples(t *testing.T) {
	files := shippedPolicyTests(t)
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		// Its pods ask for seats in resources.limits.
		t.Logf("licenses.yaml left out: %v", kubeversion.Unavailable(kubeversion.DRAExtendedResource))
		files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "licenses.yaml" })
	}
	report := filepath.Join(t.TempDir(), "report.xml")
	code, out, _ := runTestCommand(t, append([]string{"--junit", report}, files...)...)
	if code != exitOK {
		t.Fatalf("exit code %d, want %d", code, exitOK)
	}
	if strings.Contains(out, "FAIL") || !strings.Contains(out, " passed, 0 failed, 0 of ") {
		t.Errorf("output has a failure:\n%s", out)
	}
	j := readJUnit(t, report)
	if j.Failures != 0 || j.Errors != 0 || len(j.Suites) != len(files) || j.Tests < len(files) {
		t.Errorf("JUnit: %d tests, %d failures, %d errors in %d suites; want no failure or error in %d suites", j.Tests, j.Failures, j.Errors, len(j.Suites), len(files))
	}
}

// TestPolicyTestFailures: deliberately wrong expectations fail, with the
// pod, where it landed and the explanation, in the terminal and in JUnit.
func TestPolicyTestFailures(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.xml")
	code, out, _ := runTestCommand(t, "--junit", report, "testdata/policy/wrong.yaml", "testdata/policy/wrong-same.yaml")
	if code != exitTestFailed {
		t.Fatalf("exit code %d, want %d", code, exitTestFailed)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^testdata/policy/wrong.yaml \(scheduler config ../../examples/scenarios/placement-config.yaml\): 1 passed, 3 failed$`),
		regexp.MustCompile(`(?m)^  PASS  expect\[0\] the critical API never runs on spot$`),
		regexp.MustCompile(`(?m)^  FAIL  expect\[1\] payments run in the US\n        6 of 6 pods are not on nodes with topology.kubernetes.io/region=us-east-1: payments/ledger-\S+ -> (eu|spot)-\d`),
		// The explanation: the scores that chose the node and the rule
		// that filtered out the US nodes.
		regexp.MustCompile(`(?m)^        payments/ledger-\S+ -> (eu|spot)-\d\n          profile custom-scheduler, attempt 1: 4 feasible node\(s\)\n          plugin  +weight`),
		regexp.MustCompile(`Filter PlacementPolicy  UnschedulableAndUnresolvable  node\(s\) didn't match placement rule "eu-data-residency"  us-1, us-2`),
		regexp.MustCompile(`(?m)^  FAIL  expect\[2\] pods in analytics stay unschedulable, rejected by PlacementPolicy\n        6 of 6 pods are not unschedulable, rejected by PlacementPolicy: analytics/batch-\S+ -> spot-\d`),
		regexp.MustCompile(`(?m)^  FAIL  expect\[3\] at most 1 pods in payments with app=no-such-app per node\n        no pod of the result matches pods in payments with app=no-such-app$`),
		// samePlacementsAs: 6 on the busiest node against MostPods' fewer
		// (3, 2, 1 on 1.37; 2, 2, 2 on 1.35, whose default scores differ).
		regexp.MustCompile(`(?m)^  FAIL  expect\[0\] pods of Deployment default/web placed as under \S+mostpods-config.yaml\n        placed otherwise than under ../../examples/scenarios/mostpods-config.yaml \(pods per node of each object, per class of like nodes\): Deployment default/web on consolidation-1: \[6\] under ../../manifests/nodelesspods/consolidation-config.yaml, \[[1-5]\] under ../../examples/scenarios/mostpods-config.yaml`),
		regexp.MustCompile(`(?m)^        default/web-\S+ -> consolidation-1 \(under ../../manifests/nodelesspods/consolidation-config.yaml\)\n          profile consolidating-scheduler, attempt 1`),
		regexp.MustCompile(`(?m)^1 passed, 4 failed, 0 of 2 files could not run$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output does not match %s", want)
		}
	}

	j := readJUnit(t, report)
	if j.Tests != 5 || j.Failures != 4 || j.Errors != 0 || len(j.Suites) != 2 {
		t.Fatalf("JUnit: %d tests, %d failures, %d errors in %d suites; want 5, 4, 0 in 2", j.Tests, j.Failures, j.Errors, len(j.Suites))
	}
	var names []string
	for _, c := range j.Suites[0].Cases {
		names = append(names, c.Name)
		if c.Failure != nil && !strings.HasPrefix(c.Failure.Text, c.Failure.Message+"\n") {
			t.Errorf("%s: the failure's text does not start with its message:\n%s", c.Name, c.Failure.Text)
		}
	}
	wantNames := []string{"expect[0] the critical API never runs on spot", "expect[1] payments run in the US",
		"expect[2] pods in analytics stay unschedulable, rejected by PlacementPolicy", "expect[3] at most 1 pods in payments with app=no-such-app per node"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("testcases (-want +got):\n%s", diff)
	}
	if f := j.Suites[0].Cases[1].Failure; f == nil || !strings.Contains(f.Text, `didn't match placement rule "eu-data-residency"`) {
		t.Errorf("the JUnit failure of expect[1] has no explanation: %+v", f)
	}
}

// TestPolicyTestInput: bad input is refused before anything runs, exit 2
// (3 for missing binaries), with the file and the field path.
func TestPolicyTestInput(t *testing.T) {
	shipped, err := filepath.Abs(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	placement, err := filepath.Abs("../../examples/scenarios/placement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		// stdout and stderr are substrings of stdout and stderr; no
		// stdout means it must be empty.
		stdout, stderr []string
	}{
		{name: "no file", code: exitInput, stderr: []string{"playground test: no scenario file given\nSee 'playground test --help'.\n"}},
		{name: "help", args: []string{"--help"}, code: exitOK, stdout: []string{"Exit codes: 0 every assertion passed; 1 an assertion failed; 2 bad input"}},
		{
			name: "no expect", args: []string{"testdata/policy/no-expect.yaml"}, code: exitInput,
			stderr: []string{"testdata/policy/no-expect.yaml: expect: Required value: playground test needs assertions"},
		},
		{
			name: "invalid assertions", args: []string{"testdata/policy/bad-expect.yaml", "testdata/policy/no-expect.yaml"}, code: exitInput,
			stderr: []string{
				"playground test: testdata/policy/bad-expect.yaml: invalid scenario (4 problems):\n" +
					"  testdata/policy/bad-expect.yaml: expect[0].maxPodsPerNode: Invalid value: -1: must not be negative\n",
				`testdata/policy/bad-expect.yaml: expect[1].pods.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
				`testdata/policy/bad-expect.yaml: expect[2].pods.namespace: Not found: "x": no object of the scenario is in this namespace (the scenario has no namespaced object)`,
				"testdata/policy/bad-expect.yaml: expect[2]: Required value: an assertion needs a check",
				"testdata/policy/no-expect.yaml: expect: Required value",
			},
		},
		{
			name: "a namespace of no object, before the run", args: []string{writeFile(t, "ns.yaml", "base: "+placement+"\nexpect: [{pods: {namespace: paymnets}, maxSpread: 1}]\n")}, code: exitInput,
			stderr: []string{`ns.yaml: expect[0].pods.namespace: Not found: "paymnets": no object of the scenario is in this namespace; did you mean "payments"?`},
		},
		{
			name: "a config that does not exist", args: []string{"--config", "no-such-config.yaml", "testdata/policy/wrong.yaml"}, code: exitInput,
			stderr: []string{"testdata/policy/wrong.yaml: ", "no-such-config.yaml"},
		},
		{
			name: "a samePlacementsAs config that does not exist", args: []string{writeFile(t, "s.yaml", "nodes: [{name: a}]\nconfig: "+shipped+"\nexpect: [{samePlacementsAs: {config: nope.yaml}}]\n")}, code: exitInput,
			stderr: []string{"nope.yaml"},
		},
		{
			name: "missing binaries", args: []string{"--assets", t.TempDir(), "testdata/policy/wrong.yaml"}, code: exitTestNotRun,
			stderr: []string{"playground test: ", "etcd"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runTestCommand(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if len(tc.stdout) == 0 && out != "" {
				t.Errorf("stdout is not empty:\n%s", out)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout does not contain %q:\n%s", s, out)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not contain %q:\n%s", s, stderr)
				}
			}
		})
	}
}

// TestLoadTestFile: the configs a file runs with, the scenario's own
// relative to the file, --config over it, each samePlacementsAs config
// once.
func TestLoadTestFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	own := write("own.yaml", `nodes: [{name: a}]
config: conf/main.yaml
expect:
  - {maxSpread: 1, name: one}
  - {samePlacementsAs: {config: other.yaml}}
  - {samePlacementsAs: {config: /abs/third.yaml}}
  - {samePlacementsAs: {config: other.yaml}, pods: {matchLabels: {app: x}}}
`)
	none := write("none.yaml", "nodes: [{name: a}]\nexpect: [{maxSpread: 1}]\n")
	tests := []struct {
		name, file, flag string
		configs          []string
		others           map[string]int
	}{
		{name: "its own config", file: own, configs: []string{filepath.Join(dir, "conf/main.yaml"), filepath.Join(dir, "other.yaml"), "/abs/third.yaml"},
			others: map[string]int{"other.yaml": 1, "/abs/third.yaml": 2}},
		{name: "--config overrides it", file: own, flag: "flag.yaml", configs: []string{"flag.yaml", filepath.Join(dir, "other.yaml"), "/abs/third.yaml"},
			others: map[string]int{"other.yaml": 1, "/abs/third.yaml": 2}},
		{name: "no config: the shipped profile", file: none, configs: []string{defaultTestConf}, others: map[string]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadTestFile(tc.file, tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.configs, got.configs); diff != "" {
				t.Errorf("configs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.others, got.others); diff != "" {
				t.Errorf("others (-want +got):\n%s", diff)
			}
		})
	}
}
