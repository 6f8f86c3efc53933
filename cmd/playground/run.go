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
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/adminsched/scheduler-plugins/internal/playground"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// Exit codes of run.
const (
	exitOK      = 0
	exitFailure = 1 // the control plane, the scheduler or the wait failed
	exitInput   = 2 // bad flags, scenario or scheduler config
)

type flags struct {
	assets, config, compare, scenario, output string
	timeout                                   time.Duration
	keep, explain, karpenter, admission       bool
	verbosity, explainNodes                   int
}

// defaultAssetsDir is --assets' default for every subcommand:
// $KUBEBUILDER_ASSETS, else ./bin.
func defaultAssetsDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, _ := filepath.Abs("bin")
	return dir
}

func parseFlags(args []string, stderr io.Writer) (*flags, int) {
	defaultAssets := defaultAssetsDir()
	f := &flags{}
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: playground [flags]\n       playground snapshot [flags]   write a scenario of a live cluster (see playground snapshot --help)\n       playground test [flags] FILE...   run scenarios' expect: assertions (see playground test --help)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.assets, "assets", defaultAssets, "directory holding etcd, kube-apiserver, kube-controller-manager and kwok (default: $KUBEBUILDER_ASSETS, else ./bin)")
	fs.StringVar(&f.config, "config", "manifests/nodelesspods/scheduler-config.yaml", "KubeSchedulerConfiguration file to run the scheduler with")
	fs.StringVar(&f.compare, "compare", "", "second KubeSchedulerConfiguration: run the scenario again with it on a fresh control plane and show both placements")
	fs.StringVar(&f.scenario, "scenario", "examples/scenarios/tutorial.yaml", "scenario file: nodes and objects to create")
	fs.StringVar(&f.output, "output", "text", "output format: text or json")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "how long to wait for every pod to be bound or unschedulable")
	fs.BoolVar(&f.keep, "keep", false, "after printing, keep the control plane and the scheduler up until Ctrl-C")
	fs.BoolVar(&f.explain, "explain", false, "explain every pod's placement: each score plugin's normalized score, weight and the total on the best nodes, and the nodes filtered out by plugin and reason (opportunistic batching hints are off meanwhile: every pod is scored on every node)")
	fs.IntVar(&f.explainNodes, "explain-nodes", report.DefaultExplainNodes, "with --explain, how many candidate nodes to show per pod")
	fs.BoolVar(&f.karpenter, "karpenter", false, "run a real Karpenter (its KWOK provider, bin/karpenter from make karpenter) on the control plane: the scenario may hold NodePools, pods may wait for the nodes it adds, and the output lists them (a scenario without a NodePool gets one: on-demand nodes of any region)")
	fs.BoolVar(&f.admission, "admission-policies", false, "render the PlacementPolicy rules of --config as MutatingAdmissionPolicies (as bin/placement-admission does) and apply them before the scenario's objects, in every run: what an autoscaler sees of the rules")
	fs.IntVar(&f.verbosity, "v", 2, "verbosity of the log file (the scheduler's logs never go to the terminal)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		return nil, exitInput
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "playground: unexpected arguments %q\n", fs.Args())
		return nil, exitInput
	}
	if f.output != "text" && f.output != "json" {
		fmt.Fprintf(stderr, "playground: --output: unsupported value %q: text or json\n", f.output)
		return nil, exitInput
	}
	if f.explainNodes < 1 {
		fmt.Fprintf(stderr, "playground: --explain-nodes must be at least 1\n")
		return nil, exitInput
	}
	if f.timeout <= 0 {
		fmt.Fprintf(stderr, "playground: --timeout must be positive\n")
		return nil, exitInput
	}
	return f, exitOK
}

// logSink is the destination of the process-wide logger: the log file of
// the current run, nothing between runs. klog's global logger may only be
// set once, before goroutines log (klog.SetLogger is not thread-safe), so
// runs swap the file behind it instead.
type logSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (s *logSink) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

var (
	logOnce   sync.Once
	logOutput = &logSink{}
	logConfig *textlogger.Config
	logger    klog.Logger
)

// setupLogging sends klog (the scheduler's logs) and controller-runtime's
// log to a file: the terminal only gets the playground's own lines.
func setupLogging(path string, verbosity int) (klog.Logger, func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return klog.Logger{}, nil, err
	}
	logOnce.Do(func() {
		logConfig = textlogger.NewConfig(textlogger.Output(logOutput))
		logger = textlogger.NewLogger(logConfig)
		klog.SetLoggerWithOptions(logger, klog.ContextualLogger(true))
		crlog.SetLogger(logger)
	})
	_ = logConfig.Verbosity().Set(strconv.Itoa(verbosity))
	logOutput.set(f)
	return logger, func() {
		// Goroutines still winding down write nowhere.
		logOutput.set(nil)
		_ = f.Close()
	}, nil
}

// run is the whole command; main only adds signal handling and os.Exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, code := parseFlags(args, stderr)
	if o == nil {
		return code
	}
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
	logger, closeLog, err := setupLogging(logPath, o.verbosity)
	if err != nil {
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return exitFailure
	}
	defer closeLog()
	ctx = klog.NewContext(ctx, logger)

	configs := []string{o.config}
	if o.compare != "" {
		configs = append(configs, o.compare)
	}
	session, err := playground.Play(ctx, playground.Options{
		Assets:   o.assets,
		Scenario: o.scenario,
		Configs:  configs,
		Timeout:  o.timeout,
		WorkDir:  dir,
		Progress: stderr,
		Keep:     o.keep,

		Explain:      o.explain,
		ExplainNodes: o.explainNodes,

		Karpenter:         o.karpenter,
		AdmissionPolicies: o.admission,
	})
	defer session.Stop()
	code = exitOK
	if err != nil {
		var inputErr *playground.InputError
		var assetsErr *playground.AssetsError
		var timeoutErr *playground.TimeoutError
		code = exitFailure
		switch {
		case errors.As(err, &assetsErr):
			fmt.Fprintf(stderr, "playground: %v\n", err)
		case errors.As(err, &inputErr):
			fmt.Fprintf(stderr, "playground: %v\n", err)
			code = exitInput
			// A run that timed out before keeps its logs.
			keepDir = errors.As(err, &timeoutErr)
		default:
			// A failed run, or runs that timed out: their logs stay.
			keepDir = true
			fmt.Fprintf(stderr, "playground: %v\nlogs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in %s\n", err, dir)
		}
		if session == nil {
			return code
		}
		// Timed out: show what was placed, then fail.
	}

	if err := writeOutput(stdout, o.output, o.explain, session.Runs); err != nil {
		fmt.Fprintf(stderr, "playground: writing the output: %v\n", err)
		return exitFailure
	}
	if o.keep {
		fmt.Fprintf(stderr, "\nthe control plane and the scheduler stay up until Ctrl-C; try:\n  kubectl --kubeconfig %s get pods -A -o wide\n",
			session.Kubeconfig)
		<-ctx.Done()
		fmt.Fprintln(stderr, "stopping")
	}
	return code
}

// writeOutput writes the runs; in JSON, explanations are in the pods.
func writeOutput(w io.Writer, format string, explain bool, runs []report.Run) error {
	switch {
	case len(runs) == 1 && format == "json":
		return report.WriteJSON(w, runs[0].Result)
	case format == "json":
		return report.WriteCompareJSON(w, runs)
	case len(runs) == 1:
		if err := report.WriteText(w, runs[0].Result); err != nil || !explain {
			return err
		}
		fmt.Fprintln(w)
		return report.WriteExplainText(w, runs[0].Result)
	default:
		if err := report.WriteCompareText(w, runs); err != nil || !explain {
			return err
		}
		fmt.Fprintln(w)
		return report.WriteCompareExplainText(w, runs)
	}
}
