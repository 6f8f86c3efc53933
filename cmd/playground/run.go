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
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
	"github.com/adminsched/scheduler-plugins/internal/playground"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// runFlags are the flags of a scenario's run (`playground` and
// `playground run`).
type runFlags struct {
	assets, config, compare, scenario   string
	output                              oneOf
	html                                htmlFile
	groupBy                             string
	timeout                             positiveDuration
	keep, explain, karpenter, admission bool
	descheduler                         deschedulerFlags
	verbosity                           int
	explainNodes                        atLeast
	// configSet and scenarioSet say that the flags were given: otherwise
	// the built-in files run.
	configSet, scenarioSet bool
}

// The defaults of --config and --scenario: these paths of the repository,
// built in (package schedulerplugins), named so in errors and results.
const (
	defaultConfig   = "manifests/nodelesspods/scheduler-config.yaml"
	defaultScenario = "examples/scenarios/tutorial.yaml"
	builtinSuffix   = " (built in)"
)

const assetsHelp = `The control plane's binaries come from --assets, else
$KUBEBUILDER_ASSETS, else the playground's own directory if it holds them
(a clone's bin/, where make envtest builds them), else ./bin if it holds
them, else the user's cache, where the first run builds them with the Go
toolchain: minutes on a cold Go cache, once per playground version
(README.md#cold-build gives the figure).`

// assetsUsage is --assets' usage, for every command that takes it.
const assetsUsage = "directory holding etcd, kube-apiserver, kube-controller-manager and kwok; if not given, $KUBEBUILDER_ASSETS, else the playground's own directory if it holds them, else ./bin if it holds them, else the user's cache (built there once)"

const runExample = `  # The tutorial with the shipped NodeLessPods profile (both built in)
  playground

  # The same data for scripts
  playground -o json

  # Side by side with the default profile (paths from the repository's root)
  playground --compare examples/scenarios/default-profile-config.yaml

  # Why each pod landed where it did, 3 candidate nodes each
  playground --explain --explain-nodes 3

  # The same as a page to open in a browser, nodes grouped by zone
  playground --explain --html /tmp/tutorial.html

  # Another scenario and profile
  playground --scenario examples/scenarios/consolidation.yaml --config manifests/nodelesspods/consolidation-config.yaml

  # Nodes join, then the real descheduler moves pods onto them (make descheduler builds it)
  playground --scenario examples/scenarios/rebalance.yaml --config examples/scenarios/rebalance-config.yaml \
    --descheduler examples/scenarios/rebalance-descheduler-policy.yaml

  # Stay up after the run and print the export line for kubectl
  playground --keep`

// examplesOf is example, written for the root command, for the command
// named use.
func examplesOf(example, use string) string {
	if use == "playground" {
		return example
	}
	return strings.ReplaceAll(example, "  playground", "  playground "+use)
}

// newRunCommand is a command named use that runs a scenario: the root
// command and `playground run`.
// admissionPoliciesUsage is the help of --admission-policies, of run and
// test.
const admissionPoliciesUsage = "render the PlacementPolicy rules and the OnDemandShare policies of --config as MutatingAdmissionPolicies (as bin/placement-admission and ondemandshare-controller render do) and apply them before the scenario's objects, in every run: what an autoscaler sees of them; with OnDemandShare policies, also run the OnDemandShare controller, which decides the pods they gate"

func newRunCommand(use string) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   use + " [flags]",
		Short: "Run a scenario and show where every pod landed",
		Long: `Runs a scenario on a fresh embedded control plane with our scheduler and
shows where every pod landed (with --compare, once per scheduler config,
side by side). The default scenario and scheduler config are built in.
` + assetsHelp,
		Example: examplesOf(runExample, use),
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.configSet = cmd.Flags().Changed("config")
			f.scenarioSet = cmd.Flags().Changed("scenario")
			if cmd.Flags().Changed("explain-nodes") && !f.explain {
				return errors.New("--explain-nodes needs --explain: it limits the candidate nodes that --explain shows")
			}
			return exitWith(runScenario(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.scenario, "scenario", defaultScenario, "scenario file: nodes and objects to create; built in if not given")
	fs.StringVar(&f.config, "config", defaultConfig, "KubeSchedulerConfiguration file to run the scheduler with; built in if not given")
	fs.StringVar(&f.compare, "compare", "", "second KubeSchedulerConfiguration: run the scenario again with it on a fresh control plane and show both placements")
	addOutputFlag(cmd, &f.output, "output format: text, json or yaml (yaml is the json document)")
	fs.Var(&f.html, "html", "also write the run (every config's with --compare) as a self-contained HTML report to `FILE`, whose directory must exist; the output on stdout stays as -o gives it")
	addGroupByFlag(cmd, &f.groupBy)
	f.timeout = positiveDuration(60 * time.Second)
	fs.Var(&f.timeout, "timeout", "how long to wait for every pod to be bound or unschedulable, per scheduler config")
	fs.BoolVar(&f.explain, "explain", false, "explain every pod's placement: each score plugin's normalized score, weight and the total on the best nodes, and the nodes filtered out by plugin and reason (opportunistic batching hints are off meanwhile: every pod is scored on every node)")
	f.explainNodes = atLeast{value: report.DefaultExplainNodes, min: 1}
	fs.Var(&f.explainNodes, "explain-nodes", "with --explain, how many candidate nodes to show per pod")
	fs.BoolVar(&f.keep, "keep", false, "after a successful run, keep the control plane and the scheduler up until Ctrl-C and print an export line for kubectl; pods naming no schedulerName get the in-tree profile (unless the config serves default-scheduler)")
	fs.BoolVar(&f.karpenter, "karpenter", false, "run a real Karpenter (its KWOK provider, bin/karpenter from make karpenter) on the control plane: the scenario may hold NodePools, pods may wait for the nodes it adds, and the output lists them (a scenario without a NodePool gets one: on-demand nodes of any region)")
	fs.BoolVar(&f.admission, "admission-policies", false, admissionPoliciesUsage)
	f.descheduler.add(cmd)
	fs.StringVar(&f.assets, "assets", "", assetsUsage)
	fs.IntVarP(&f.verbosity, "v", "v", 2, "verbosity of the log file (the scheduler's logs never go to the terminal)")
	for _, name := range []string{"scenario", "config", "compare"} {
		_ = cmd.MarkFlagFilename(name, "yaml", "yml", "json")
	}
	_ = cmd.MarkFlagFilename("html", "html")
	_ = cmd.MarkFlagDirname("assets")
	return cmd
}

// inputs returns the scenario and the configs to run, and the built-in
// files among them.
func (f *runFlags) inputs() (scenario string, configs []string, builtin map[string][]byte) {
	builtin = map[string][]byte{}
	scenario, config := f.scenario, f.config
	if !f.scenarioSet {
		scenario = defaultScenario + builtinSuffix
		builtin[scenario] = schedulerplugins.TutorialScenario
	}
	if !f.configSet {
		config = defaultConfig + builtinSuffix
		builtin[config] = schedulerplugins.DefaultSchedulerConfig
	}
	configs = []string{config}
	if f.compare != "" {
		configs = append(configs, f.compare)
	}
	return scenario, configs, builtin
}

// run is the whole command line (without the program's name); main only
// adds signal handling and os.Exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return execute(ctx, args, stdout, stderr)
}

// runScenario runs the scenario of f and returns the exit code.
func runScenario(ctx context.Context, f *runFlags, stdout, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "playground-")
	if err != nil {
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return exitFailure
	}
	keepDir := false
	defer func() {
		if !keepDir {
			_ = os.RemoveAll(dir)
		}
	}()
	logPath := filepath.Join(dir, "playground.log")
	logger, closeLog, err := setupLogging(logPath, f.verbosity)
	if err != nil {
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return exitFailure
	}
	defer closeLog()
	ctx = klog.NewContext(ctx, logger)

	scenarioFile, configs, builtin := f.inputs()
	decoded, err := playground.LoadScenario(scenarioFile, builtin)
	if err != nil {
		return reportRunError(stderr, err, dir, &keepDir)
	}
	opts := playground.Options{
		Scenario: decoded,
		Configs:  configs,
		Builtin:  builtin,
		Timeout:  time.Duration(f.timeout),
		WorkDir:  dir,
		Progress: stderr,
		Keep:     f.keep,

		Explain:      f.explain,
		ExplainNodes: int(f.explainNodes.value),

		Karpenter:         f.karpenter,
		AdmissionPolicies: f.admission,
		Descheduler:       f.descheduler.options(),
	}
	if opts.Assets, err = assetsFor(ctx, f.assets, opts, stderr); err != nil {
		return reportRunError(stderr, err, dir, &keepDir)
	}
	session, err := playground.Play(ctx, opts)
	defer session.Stop()
	code := exitOK
	if err != nil {
		code = reportRunError(stderr, err, dir, &keepDir)
		if session == nil {
			return code
		}
		// Timed out: show what was placed, then fail.
	}

	if err := writeOutput(stdout, f.output.value, f.explain, session.Results()); err != nil {
		fmt.Fprintf(stderr, "playground: writing the output: %v\n", err)
		return exitFailure
	}
	if f.html != "" {
		if err := writeHTML(string(f.html), runPage(scenarioFile, f.groupBy, session.Results()), stderr); err != nil {
			fmt.Fprintf(stderr, "playground: --html: %v\n", err)
			return exitFailure
		}
	}
	if f.keep && code != exitOK {
		session.Stop()
		fmt.Fprintln(stderr, "--keep: the run failed, so the control plane and the scheduler are stopped")
	}
	if f.keep && code == exitOK {
		// One write: a reader that waits for the export line gets it whole.
		fmt.Fprint(stderr, keepBanner(session, opts.Assets))
		<-ctx.Done()
		fmt.Fprintln(stderr, "stopping")
	}
	return code
}

// reportRunError prints err of a run once, with where the logs are kept if
// anything ran (then *keepDir is set), and returns the exit code.
func reportRunError(stderr io.Writer, err error, dir string, keepDir *bool) int {
	var inputErr *playground.InputError
	var assetsErr *playground.AssetsError
	var timeoutErr *playground.TimeoutError
	switch {
	case errors.As(err, &assetsErr):
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return exitFailure
	case errors.As(err, &inputErr):
		fmt.Fprintf(stderr, "playground: %v\n", err)
		// A run that timed out before keeps its logs.
		if errors.As(err, &timeoutErr) {
			*keepDir = true
			fmt.Fprintf(stderr, "logs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in %s\n", dir)
		}
		return exitInput
	default:
		// A failed run, or runs that timed out: their logs stay.
		*keepDir = true
		fmt.Fprintf(stderr, "playground: %v\nlogs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in %s\n", err, dir)
		return exitFailure
	}
}
