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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
	"github.com/adminsched/scheduler-plugins/internal/playground"
	"github.com/adminsched/scheduler-plugins/internal/playground/policytest"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// Exit codes of playground test. 2 is exitInput, as for a plain run.
const (
	exitTestFailed = 1 // an assertion failed
	exitTestNotRun = 3 // a scenario could not run: the control plane, a timeout
)

// defaultTestConf is the config of a file that names none, when --config
// is not given: the built-in file.
const defaultTestConf = defaultConfig + builtinSuffix

const testLong = `Runs each scenario file on a fresh embedded control plane with the
scheduler config it names (config:, relative to the file; --config
overrides it; neither: ` + defaultConfig + `, built in), with explanations
recorded, then checks its expect: assertions. Prints one line per
assertion, PASS or FAIL, and under a failure the pods concerned, where
each landed and the explanation of that decision. An assertion with
samePlacementsAs runs the scenario again under that config. The
deschedule steps run the real descheduler with the policy the file names
(descheduler:, relative to the file; --descheduler overrides it).

Exit codes: 0 every assertion passed; 1 an assertion failed; 2 bad input
(flags, a file that does not load or validate or has no expect, a
scheduler config that does not load); 3 a scenario could not run (the
control plane failed, a timeout, a missing binary): its assertions count
as errors.

` + assetsHelp

const testExample = `  # The shipped policy tests, with a JUnit report for CI (from the repository's root;
  # the report goes outside the clone: in GitHub Actions, $RUNNER_TEMP/report.xml)
  playground test --junit /tmp/report.xml examples/scenarios/placement.yaml examples/scenarios/policy/residency.yaml

  # The same, with an HTML report per scenario that the JUnit file names (/tmp/reports/placement.html, …)
  playground test --html /tmp/reports --junit /tmp/report.xml examples/scenarios/placement.yaml examples/scenarios/policy/residency.yaml

  # Every file under another config than the one each names
  playground test --config examples/scenarios/placement-config.yaml examples/scenarios/policy/residency.yaml`

type testFlags struct {
	assets, config, junit string
	html                  htmlDir
	groupBy               string
	admission             bool
	descheduler           deschedulerFlags
	timeout               positiveDuration
	verbosity             int
	files                 []string
}

func newTestCommand() *cobra.Command {
	f := &testFlags{}
	cmd := &cobra.Command{
		Use:     "test [flags] FILE...",
		Short:   "Run scenarios' expect: assertions (policy tests)",
		Long:    testLong,
		Example: testExample,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no scenario file given")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.files = args
			return exitWith(runTest(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.config, "config", "", "KubeSchedulerConfiguration to run every file with, instead of the config each names")
	fs.StringVar(&f.junit, "junit", "", "also write the results as JUnit XML to this file")
	fs.Var(&f.html, "html", htmlDirUsage)
	addGroupByFlag(cmd, &f.groupBy)
	f.timeout = positiveDuration(60 * time.Second)
	fs.Var(&f.timeout, "timeout", "per run, how long to wait for every pod to be bound or unschedulable")
	fs.BoolVar(&f.admission, "admission-policies", false, admissionPoliciesUsage)
	f.descheduler.add(cmd)
	fs.StringVar(&f.assets, "assets", "", assetsUsage)
	fs.IntVarP(&f.verbosity, "v", "v", 2, "verbosity of the log file (the scheduler's logs never go to the terminal)")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("junit", "xml")
	_ = cmd.MarkFlagDirname("html")
	_ = cmd.MarkFlagDirname("assets")
	return cmd
}

// runTest runs the files of o and returns the exit code.
func runTest(ctx context.Context, o *testFlags, stdout, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "playground-test-")
	if err != nil {
		fmt.Fprintf(stderr, "playground test: %v\n", err)
		return exitTestNotRun
	}
	keepDir := false
	defer func() {
		if !keepDir {
			_ = os.RemoveAll(dir)
		}
	}()
	logger, closeLog, err := setupLogging(filepath.Join(dir, "playground.log"), o.verbosity)
	if err != nil {
		fmt.Fprintf(stderr, "playground test: %v\n", err)
		return exitTestNotRun
	}
	defer closeLog()
	ctx = klog.NewContext(ctx, logger)

	// Every file and config is checked before anything runs, and before
	// the binaries are looked for.
	assets := findAssets(o.assets)
	var files []*testFile
	bad := false
	for i, path := range o.files {
		t, err := loadTestFile(path, o.config)
		if err == nil {
			opts := testOptions(assets, o, t, filepath.Join(dir, fmt.Sprintf("check-%d", i+1)))
			if assets == "" {
				err = playground.CheckInputs(ctx, opts)
			} else {
				err = playground.Check(ctx, opts)
			}
		}
		var assetsErr *playground.AssetsError
		if errors.As(err, &assetsErr) {
			fmt.Fprintf(stderr, "playground test: %v\n", err)
			return exitTestNotRun
		}
		if err != nil {
			fmt.Fprintf(stderr, "playground test: %s: %v\n", path, err)
			bad = true
			continue
		}
		files = append(files, t)
	}
	if bad {
		return exitInput
	}
	reports, err := htmlReports(o, files)
	if err != nil {
		fmt.Fprintf(stderr, "playground test: --html: %v\n", err)
		return exitInput
	}
	if assets == "" {
		if assets, err = obtainAssets(ctx, stderr); err != nil {
			fmt.Fprintf(stderr, "playground test: %v\n", err)
			return exitTestNotRun
		}
	}

	var results []*policytest.FileResult
	for i, t := range files {
		fmt.Fprintf(stderr, "testing %s (%d/%d)\n", t.path, i+1, len(files))
		r, runs := testOne(ctx, assets, o, t, filepath.Join(dir, fmt.Sprintf("file-%d", i+1)), stderr)
		if r.Err != nil {
			keepDir = true
		}
		if reports != nil {
			r.HTMLReport = reports[i]
			if err := writeHTML(r.HTMLReport, testPage(r, runs, o.groupBy), stderr); err != nil {
				fmt.Fprintf(stderr, "playground test: --html: %v\n", err)
				return exitTestNotRun
			}
		}
		results = append(results, r)
		if err := policytest.WriteText(stdout, r); err != nil {
			fmt.Fprintf(stderr, "playground test: writing the output: %v\n", err)
			return exitTestNotRun
		}
		if ctx.Err() != nil {
			break // Ctrl-C: report what ran
		}
	}

	code := exitOK
	passed, failed, notRun := 0, 0, 0
	for _, r := range results {
		p, f := r.Counts()
		passed, failed = passed+p, failed+f
		if r.Err != nil {
			notRun++
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed, %d of %d files could not run\n", passed, failed, notRun+len(files)-len(results), len(files))
	switch {
	case notRun > 0 || len(results) < len(files):
		code = exitTestNotRun
		fmt.Fprintf(stderr, "logs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in %s\n", dir)
	case failed > 0:
		code = exitTestFailed
	}
	if o.junit != "" {
		if err := writeJUnitFile(o.junit, results); err != nil {
			fmt.Fprintf(stderr, "playground test: --junit: %v\n", err)
			return exitTestNotRun
		}
	}
	return code
}

func testOptions(assets string, o *testFlags, t *testFile, workDir string) playground.Options {
	return playground.Options{
		Assets:   assets,
		Scenario: t.file,
		Configs:  t.configs,
		Builtin:  map[string][]byte{defaultTestConf: schedulerplugins.DefaultSchedulerConfig},
		Timeout:  time.Duration(o.timeout),
		WorkDir:  workDir,
		Explain:  true,

		AdmissionPolicies: o.admission,
		Descheduler:       o.descheduler.options(),
	}
}

// testOne runs one file under each of its configs and evaluates it; it
// returns the runs too (what ran of them, if the scenario could not run).
func testOne(ctx context.Context, assets string, o *testFlags, t *testFile, workDir string, stderr io.Writer) (*policytest.FileResult, []report.Run) {
	r := &policytest.FileResult{File: t.path, Config: t.configs[0]}
	for i, a := range t.file.Scenario.Expect {
		name := a.Name
		if name == "" {
			name = policytest.Describe(&a)
		}
		r.Outcomes = append(r.Outcomes, policytest.Outcome{Index: i, Name: name})
	}
	start := time.Now()
	defer func() { r.Time = time.Since(start) }()
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		r.Err = err
		return r, nil
	}
	opts := testOptions(assets, o, t, workDir)
	opts.Progress = stderr
	session, err := playground.Play(ctx, opts)
	defer session.Stop()
	if err != nil {
		// A timeout leaves a placement that is not the scenario's end:
		// its assertions are not evaluated on it.
		r.Err = err
		if session == nil {
			return r, nil
		}
		return r, session.Results()
	}
	// The expectations are checked against what ran: the plan of the
	// scenario's config and the nodes as that run created them.
	in := policytest.Input{
		Plan:   session.Runs[0].Plan,
		Nodes:  session.Runs[0].Nodes,
		Config: t.configs[0],
		Result: session.Runs[0].Result,
		Others: map[string]report.Result{},
	}
	in.OtherNames = map[string]string{}
	for written, i := range t.others {
		in.Others[written] = session.Runs[i].Result
		in.OtherNames[written] = t.configs[i]
	}
	r.Outcomes = policytest.Evaluate(in)
	return r, session.Results()
}
