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
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
	"github.com/adminsched/scheduler-plugins/internal/clusterbin"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// These cover the command line without a cluster; the one test that runs
// one (TestDefaultsFromAnotherFolder) is marked.

func executeArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := execute(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestFlagErrors: a usage error names the flag, is printed once and is
// followed by where the help is, exit 2, before anything runs.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "xml"}, `playground: invalid argument "xml" for "-o, --output" flag: must be one of text, json, yaml
See 'playground --help'.
`},
		{[]string{"run", "--output=xml"}, `playground run: invalid argument "xml" for "-o, --output" flag: must be one of text, json, yaml
See 'playground run --help'.
`},
		{[]string{"--explain-nodes", "3"}, `playground: --explain-nodes needs --explain: it limits the candidate nodes that --explain shows
See 'playground --help'.
`},
		{[]string{"--explain", "--explain-nodes", "0"}, `playground: invalid argument "0" for "--explain-nodes" flag: must be at least 1
See 'playground --help'.
`},
		{[]string{"--timeout", "0s"}, `playground: invalid argument "0s" for "--timeout" flag: must be positive
See 'playground --help'.
`},
		{[]string{"--timeout", "-1m"}, `playground: invalid argument "-1m" for "--timeout" flag: must be positive
See 'playground --help'.
`},
		{[]string{"--timeout", "soon"}, `playground: invalid argument "soon" for "--timeout" flag: not a duration (such as 90s or 2m): time: invalid duration "soon"
See 'playground --help'.
`},
		{[]string{"test", "--timeout", "0s", "x.yaml"}, `playground test: invalid argument "0s" for "--timeout" flag: must be positive
See 'playground test --help'.
`},
		{[]string{"extra"}, `playground: unexpected argument "extra": playground takes flags only
See 'playground --help'.
`},
		{[]string{"tset"}, `playground: unexpected argument "tset": playground takes flags only; did you mean the command "test"?
See 'playground --help'.
`},
		{[]string{"run", "tutorial.yaml"}, `playground run: unexpected argument "tutorial.yaml": playground run takes flags only
See 'playground run --help'.
`},
		{[]string{"--scenaro", "x.yaml"}, `playground: unknown flag: --scenaro; did you mean --scenario?
See 'playground --help'.
`},
		{[]string{"--scenarios", "x.yaml"}, `playground: unknown flag: --scenarios; did you mean --scenario?
See 'playground --help'.
`},
		{[]string{"-scenarios", "x.yaml"}, `playground: unknown shorthand flag: 's' in -scenarios; did you mean --scenario?
See 'playground --help'.
`},
		{[]string{"--zzzzzzzz"}, `playground: unknown flag: --zzzzzzzz
See 'playground --help'.
`},
		{[]string{"run", "--explian"}, `playground run: unknown flag: --explian; did you mean --explain?
See 'playground run --help'.
`},
		{[]string{"test", "--junt=r.xml", "x.yaml"}, `playground test: unknown flag: --junt; did you mean --junit?
See 'playground test --help'.
`},
		{[]string{"snapshot", "--kubconfig", "k"}, `playground snapshot: unknown flag: --kubconfig; did you mean --kubeconfig?
See 'playground snapshot --help'.
`},
		{[]string{"version", "--ouptut", "json"}, `playground version: unknown flag: --ouptut; did you mean --output?
See 'playground version --help'.
`},
		{[]string{"test"}, `playground test: no scenario file given
See 'playground test --help'.
`},
		{[]string{"version", "-o", "xml"}, `playground version: invalid argument "xml" for "-o, --output" flag: must be one of text, json, yaml
See 'playground version --help'.
`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, stderr := executeArgs(tt.args...)
			if code != exitInput {
				t.Errorf("exit code %d, want %d", code, exitInput)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if diff := cmp.Diff(tt.want, stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLongFlagsWithOneDash: the flags that the standard flag package took
// with one dash still work so; shorthands and values are left alone.
func TestLongFlagsWithOneDash(t *testing.T) {
	tests := []struct {
		args, want []string
	}{
		{[]string{"-scenario", "s.yaml", "-output=json", "-keep"}, []string{"--scenario", "s.yaml", "--output=json", "--keep"}},
		{[]string{"-o", "json", "-v", "4", "-h"}, []string{"-o", "json", "-v", "4", "-h"}},
		{[]string{"test", "-config", "c.yaml", "-junit", "r.xml", "f.yaml"}, []string{"test", "--config", "c.yaml", "--junit", "r.xml", "f.yaml"}},
		{[]string{"snapshot", "-all-namespaces=false", "-namespace", "a"}, []string{"snapshot", "--all-namespaces=false", "--namespace", "a"}},
		{[]string{"-help"}, []string{"--help"}},
		{[]string{"-version"}, []string{"--version"}},
		// Not a flag of the command, and after --: as given.
		{[]string{"-junit", "x"}, []string{"-junit", "x"}},
		{[]string{"test", "--", "-config"}, []string{"test", "--", "-config"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, longFlagsWithOneDash(newRootCommand(), tt.args)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestHelp: every command's help is on stdout, with double-dash flags, each
// default once, and examples.
func TestHelp(t *testing.T) {
	singleDash := regexp.MustCompile(`(^|[\s(\[])-[a-z][a-z-]+`)
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"snapshot", "--help"}, {"test", "--help"}, {"version", "--help"}, {"help", "test"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, stderr := executeArgs(args...)
			if code != exitOK || stderr != "" {
				t.Fatalf("exit code %d, stderr %q; want 0 and nothing", code, stderr)
			}
			for _, want := range []string{"Usage:\n", "Examples:\n", "Flags:\n", "  -h, --help "} {
				if !strings.Contains(out, want) {
					t.Errorf("help lacks %q:\n%s", want, out)
				}
			}
			for _, line := range strings.Split(out, "\n") {
				if m := singleDash.FindString(line); m != "" {
					t.Errorf("a flag with a single dash, %q, in %q", m, line)
				}
				if strings.Count(line, "default") > 1 {
					t.Errorf("a default shown twice in %q", line)
				}
			}
		})
	}
	_, out, _ := executeArgs("--help")
	out = regexp.MustCompile(` {2,}`).ReplaceAllString(out, "  ") // the columns' width
	for _, want := range []string{
		`  --scenario string  scenario file: nodes and objects to create; built in if not given (default "examples/scenarios/tutorial.yaml")`,
		`  -o, --output string  output format: text, json or yaml (yaml is the json document) (default "text")`,
		"  --timeout duration  ", "(default 1m0s)\n", "  --version  version for playground\n",
		"\n  run  ", "\n  snapshot  ", "\n  test  ", "\n  version  ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("playground --help lacks %q:\n%s", want, out)
		}
	}
}

// TestExamples: the commands that the help's examples give parse, and the
// repository files they name exist.
func TestExamples(t *testing.T) {
	var commands []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		commands = append(commands, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	n := 0
	for _, c := range commands {
		// A command continued with a trailing backslash is one command.
		example := strings.ReplaceAll(c.Example, "\\\n", " ")
		for _, line := range strings.Split(example, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "playground") {
				continue
			}
			n++
			fields := strings.Fields(line)[1:]
			root := newRootCommand()
			cmd, args, err := root.Find(fields)
			if err != nil {
				t.Errorf("%s: %v", line, err)
				continue
			}
			if err := cmd.ParseFlags(args); err != nil {
				t.Errorf("%s: %v", line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%s: %v", line, err)
			}
			files := cmd.Flags().Args()
			for _, name := range []string{"scenario", "config", "compare", "descheduler"} {
				if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
					files = append(files, f.Value.String())
				}
			}
			for _, f := range files {
				if !strings.HasPrefix(f, "examples/") && !strings.HasPrefix(f, "manifests/") {
					continue // written by an example before
				}
				if _, err := os.Stat(filepath.Join("../..", f)); err != nil {
					t.Errorf("%s: %v", line, err)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d examples", n)
	}
}

// minorBuildFlags are the go build flags of this build's minor: none for
// go.mod, its module file and tag for another.
func minorBuildFlags() []string { return kubeversion.BuildFlags("../..") }

// kubernetesVersion is the k8s.io/kubernetes version this build's module
// file requires: go.mod for the newest minor, go.1.<minor>.mod for another.
func kubernetesVersion(t *testing.T) string {
	t.Helper()
	modFile := kubeversion.ModFile("../..")
	data, err := os.ReadFile(modFile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+k8s\.io/kubernetes (v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s requires no k8s.io/kubernetes", modFile)
	}
	return string(m[1])
}

func TestVersion(t *testing.T) {
	k8s := kubernetesVersion(t)
	code, out, stderr := executeArgs("--version")
	if code != exitOK || stderr != "" {
		t.Fatalf("--version: exit code %d, stderr %q", code, stderr)
	}
	if want := "playground " + readVersion().Playground + ", Kubernetes " + k8s + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH; !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version printed %q, want one line starting with %q", out, want)
	}
	for _, format := range []string{"json", "yaml"} {
		code, out, stderr = executeArgs("version", "-o", format)
		if code != exitOK || stderr != "" {
			t.Fatalf("version -o %s: exit code %d, stderr %q", format, code, stderr)
		}
		var v versionInfo
		if err := yaml.UnmarshalStrict([]byte(out), &v); err != nil {
			t.Fatalf("version -o %s: %v\n%s", format, err, out)
		}
		want := versionInfo{Playground: readVersion().Playground, Revision: v.Revision, Kubernetes: k8s, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("version -o %s (-want +got):\n%s", format, diff)
		}
	}
	code, out, _ = executeArgs("version")
	if code != exitOK || !strings.Contains(out, "Kubernetes: "+k8s+"\n") {
		t.Errorf("version: exit code %d, output %q", code, out)
	}
}

// TestVersionOf: what the build information of a released or checked-out
// binary gives.
func TestVersionOf(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/adminsched/scheduler-plugins", Version: "v0.4.0"},
		Deps: []*debug.Module{
			{Path: "k8s.io/api", Version: "v0.37.2"},
			{Path: "k8s.io/kubernetes", Version: "v1.37.0", Replace: &debug.Module{Path: "k8s.io/kubernetes", Version: "v1.37.2"}},
		},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
	}
	want := versionInfo{Playground: "v0.4.0", Revision: "abc123-dirty", Kubernetes: "v1.37.2", Go: "go1.99.1", Platform: "darwin/arm64"}
	if diff := cmp.Diff(want, versionOf(bi)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := versionOf(nil); got.Playground != "unknown" || got.Kubernetes != "unknown" || got.Go != runtime.Version() {
		t.Errorf("without build information: %+v", got)
	}
}

// TestOutputYAML: -o yaml is the JSON document, for one run and for
// --compare, explanations included.
func TestOutputYAML(t *testing.T) {
	result := report.Result{
		Nodes: []report.NodeResult{{Name: "a", Pods: 2}, {Name: "b"}},
		Pods: []report.PodResult{{Namespace: "default", Name: "p-1", Node: "a"}, {Namespace: "default", Name: "p-2", Node: "a",
			Explain: &report.Explanation{Profile: "custom-scheduler", Chosen: "a"}}, {Namespace: "default", Name: "p-3", Reason: "Unschedulable"}},
		Spread: 2,
	}
	for _, runs := range [][]report.Run{{{Config: "c.yaml", Result: result}}, {{Config: "c.yaml", Result: result}, {Config: "d.yaml", Result: result}}} {
		var asJSON, asYAML bytes.Buffer
		if err := writeOutput(&asJSON, "json", true, runs); err != nil {
			t.Fatal(err)
		}
		if err := writeOutput(&asYAML, "yaml", true, runs); err != nil {
			t.Fatal(err)
		}
		if json.Valid(asYAML.Bytes()) {
			t.Errorf("-o yaml printed JSON:\n%s", asYAML.String())
		}
		fromYAML, err := yaml.YAMLToJSON(asYAML.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var want, got interface{}
		if err := json.Unmarshal(asJSON.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(fromYAML, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d runs: -o yaml differs from -o json (-json +yaml):\n%s", len(runs), diff)
		}
	}
}

// TestBuiltinTutorialAlone: the built-in scenario names no base, the one
// file it would read beside itself.
func TestBuiltinTutorialAlone(t *testing.T) {
	var s struct {
		Base string `json:"base"`
	}
	if err := yaml.Unmarshal(schedulerplugins.TutorialScenario, &s); err != nil || s.Base != "" {
		t.Errorf("the built-in tutorial: base %q, error %v; want none", s.Base, err)
	}
}

// TestInputBeforeAssets: bad input is reported as such, exit 2, whether
// the binaries are missing or not given at all; then nothing is built.
func TestInputBeforeAssets(t *testing.T) {
	built := false
	fakeEnsure(t, func(context.Context, clusterbin.Options) (string, error) {
		built = true
		return t.TempDir(), nil
	})
	tutorialFile, err := filepath.Abs(tutorial)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // no ./bin
	t.Setenv("KUBEBUILDER_ASSETS", "")
	empty := t.TempDir()
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"missing scenario, empty --assets", []string{"--assets", empty, "--scenario", missing}},
		{"missing scenario, no assets", []string{"--scenario", missing}},
		{"missing --compare, no assets", []string{"--compare", missing}},
		{"mistyped plugin, no assets", []string{"--config", writeFile(t, "c.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: custom-scheduler\n  plugins:\n    score:\n      enabled: [{name: NodeLessPod}]\n")}},
		{"test: missing config, no assets", []string{"test", "--config", missing, tutorialFile}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := executeArgs(tt.args...)
			if code != exitInput || out != "" {
				t.Errorf("exit code %d, stdout %q; want %d and nothing", code, out, exitInput)
			}
			if !strings.Contains(stderr, "nope.yaml") && !strings.Contains(stderr, `did you mean "NodeLessPods"?`) {
				t.Errorf("stderr does not name the bad input:\n%s", stderr)
			}
			if strings.Contains(stderr, "starting the control plane") || strings.Contains(stderr, "binaries") {
				t.Errorf("stderr is about the binaries:\n%s", stderr)
			}
		})
	}
	if built {
		t.Error("bad input built the binaries")
	}
}

// fakeEnsure makes ensure the build of the binaries for the test.
func fakeEnsure(t *testing.T, ensure func(context.Context, clusterbin.Options) (string, error)) {
	old := ensureAssets
	ensureAssets = ensure
	t.Cleanup(func() { ensureAssets = old })
}

// TestAssetsFromCache: with no --assets, $KUBEBUILDER_ASSETS or ./bin
// holding them, valid input gets its binaries built into the cache, with
// the build's progress on stderr; a failed build is reported once, before
// anything starts (exit 1; playground test: 3).
func TestAssetsFromCache(t *testing.T) {
	calls := 0
	fakeEnsure(t, func(_ context.Context, opts clusterbin.Options) (string, error) {
		calls++
		fmt.Fprintln(opts.Progress, "building the control plane")
		return "", errors.New("no go command")
	})
	tutorialFile, err := filepath.Abs(tutorial)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.Mkdir("bin", 0o755); err != nil { // without the binaries
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitFailure, "building the control plane\nplayground: no --assets given, $KUBEBUILDER_ASSETS is not set and ./bin does not hold the control plane's binaries: building them: no go command\n"},
		{[]string{"test", tutorialFile}, exitTestNotRun, "building the control plane\nplayground test: no --assets given, $KUBEBUILDER_ASSETS is not set and ./bin does not hold the control plane's binaries: building them: no go command\n"},
	} {
		calls = 0
		code, out, stderr := executeArgs(tt.args...)
		if code != tt.code || out != "" || calls != 1 {
			t.Errorf("%q: exit code %d, stdout %q, %d builds; want %d, nothing and 1", tt.args, code, out, calls, tt.code)
		}
		if diff := cmp.Diff(tt.want, stderr); diff != "" {
			t.Errorf("%q: stderr (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestREADMEFlags: the scenarios README has a row for every flag of the
// run and of snapshot, as the help names it ("`-o, --output", "`--keep").
func TestREADMEFlags(t *testing.T) {
	data, err := os.ReadFile(scenarios + "README.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	snapshot, _, err := root.Find([]string{"snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []*cobra.Command{root, snapshot} {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			row := "| `--" + f.Name
			if f.Shorthand != "" {
				row = "`-" + f.Shorthand + ", --" + f.Name
			}
			if !strings.Contains(string(data), row) {
				t.Errorf("%s --%s: the scenarios README has no %q", cmd.CommandPath(), f.Name, row)
			}
		})
	}
}

// TestCompletion: the shell completion of -o offers its values, and no
// files.
func TestCompletion(t *testing.T) {
	for _, args := range [][]string{{cobra.ShellCompRequestCmd, "-o", ""}, {cobra.ShellCompRequestCmd, "run", "--output", ""}, {cobra.ShellCompRequestCmd, "version", "-o", ""}} {
		code, out, _ := executeArgs(args...)
		if want := "text\njson\nyaml\n:4\n"; code != exitOK || out != want {
			t.Errorf("%q: exit code %d, stdout %q; want 0 and %q", args, code, out, want)
		}
	}
}
