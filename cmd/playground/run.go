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
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground"
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
	keep                                      bool
	verbosity                                 int
}

func parseFlags(args []string, stderr io.Writer) (*flags, int) {
	defaultAssets := os.Getenv("KUBEBUILDER_ASSETS")
	if defaultAssets == "" {
		defaultAssets, _ = filepath.Abs("bin")
	}
	f := &flags{}
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.assets, "assets", defaultAssets, "directory holding etcd and kube-apiserver (default: $KUBEBUILDER_ASSETS, else ./bin)")
	fs.StringVar(&f.config, "config", "manifests/nodelesspods/scheduler-config.yaml", "KubeSchedulerConfiguration file to run the scheduler with")
	fs.StringVar(&f.compare, "compare", "", "second KubeSchedulerConfiguration: run the scenario again with it on a fresh control plane and show both placements")
	fs.StringVar(&f.scenario, "scenario", "examples/scenarios/tutorial.yaml", "scenario file: nodes and objects to create")
	fs.StringVar(&f.output, "output", "text", "output format: text or json")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "how long to wait for every pod to be bound or unschedulable")
	fs.BoolVar(&f.keep, "keep", false, "after printing, keep the control plane and the scheduler up until Ctrl-C")
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

	// Every input is checked before anything starts.
	configs := []string{o.config}
	if o.compare != "" {
		configs = append(configs, o.compare)
	}
	var prepared []*schedConfig
	for i, c := range configs {
		sc, err := prepareConfig(logger, c, filepath.Join(dir, fmt.Sprintf("run-%d", i+1)))
		if err != nil {
			fmt.Fprintf(stderr, "playground: %v\n", err)
			return exitInput
		}
		prepared = append(prepared, sc)
	}
	var scenario *playground.Scenario
	for _, sc := range prepared {
		if scenario, err = playground.Load(o.scenario, sc.profiles); err != nil {
			fmt.Fprintf(stderr, "playground: invalid scenario:\n%v\n", err)
			return exitInput
		}
	}

	if err := localcluster.CheckAssets(o.assets); err != nil {
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return exitFailure
	}

	failed := func(err error) int {
		var se *setupError
		if errors.As(err, &se) {
			fmt.Fprintf(stderr, "playground: %v\n", err)
			return exitInput
		}
		keepDir = true
		fmt.Fprintf(stderr, "playground: %v\nlogs (scheduler, etcd, kube-apiserver) kept in %s\n", err, dir)
		return exitFailure
	}
	var runs []playground.Run
	code = exitOK
	for i, sc := range prepared {
		if len(prepared) > 1 {
			fmt.Fprintf(stderr, "run %d/%d with %s\n", i+1, len(prepared), sc.source)
		}
		res, stop, err := runScenario(ctx, o, sc, scenario, stderr)
		if res == nil {
			if stop != nil {
				stop()
			}
			return failed(err)
		}
		if err != nil {
			// Timed out: show what was placed, then fail.
			keepDir = true
			fmt.Fprintf(stderr, "playground: %v\nlogs (scheduler, etcd, kube-apiserver) kept in %s\n", err, dir)
			code = exitFailure
		}
		runs = append(runs, playground.Run{Config: sc.source, Result: *res})
		if o.keep && i == len(prepared)-1 {
			defer stop()
		} else {
			stop()
		}
	}

	if err := writeOutput(stdout, o.output, runs); err != nil {
		fmt.Fprintf(stderr, "playground: writing the output: %v\n", err)
		return exitFailure
	}
	if o.keep {
		fmt.Fprintf(stderr, "\nthe control plane and the scheduler stay up until Ctrl-C; try:\n  kubectl --kubeconfig %s get pods -A -o wide\n",
			prepared[len(prepared)-1].kubeconfig)
		<-ctx.Done()
		fmt.Fprintln(stderr, "stopping")
	}
	return code
}

func writeOutput(w io.Writer, format string, runs []playground.Run) error {
	switch {
	case len(runs) == 1 && format == "json":
		return playground.WriteJSON(w, runs[0].Result)
	case len(runs) == 1:
		return playground.WriteText(w, runs[0].Result)
	case format == "json":
		return playground.WriteCompareJSON(w, runs)
	default:
		return playground.WriteCompareText(w, runs)
	}
}

// runScenario starts a control plane and the scheduler, applies the
// scenario and waits. It returns the result (also on a timeout, with the
// timeout as error), and stop, which stops the scheduler and the control
// plane, whenever the control plane started.
func runScenario(ctx context.Context, o *flags, sc *schedConfig, s *playground.Scenario, stderr io.Writer) (*playground.Result, func(), error) {
	logger := klog.FromContext(ctx)
	fmt.Fprintf(stderr, "starting etcd and kube-apiserver from %s\n", o.assets)
	cp, err := localcluster.Start(o.assets, filepath.Dir(sc.path))
	if err != nil {
		return nil, nil, err
	}
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		stops = nil
	}
	stops = append(stops, func() {
		if err := cp.Stop(); err != nil {
			logger.Error(err, "Stopping the control plane")
		}
	})
	if err := os.WriteFile(sc.kubeconfig, cp.KubeConfig, 0o600); err != nil {
		return nil, stop, err
	}
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, stop, err
	}
	a := &playground.Applier{Client: client, SchedulerName: sc.profiles[0], Progress: stderr}
	if err := a.CreateNodes(ctx, s); err != nil {
		return nil, stop, err
	}
	fmt.Fprintf(stderr, "starting the scheduler from %s (profiles: %s)\n", sc.source, strings.Join(sc.profiles, ", "))
	rs, err := startScheduler(ctx, sc)
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, rs.Stop)

	wctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	refs, err := a.Apply(wctx, s)
	if err == nil {
		err = a.Wait(wctx, refs)
	}
	if err != nil && (ctx.Err() != nil || wctx.Err() == nil) {
		// Interrupted, or a failure that is not the timeout.
		return nil, stop, err
	}
	if err != nil {
		err = fmt.Errorf("not every pod was bound or found unschedulable within %v: %w", o.timeout, err)
	}
	res, cerr := playground.Collect(ctx, client, s.NodeNames(), refs)
	if cerr != nil {
		return nil, stop, errors.Join(err, cerr)
	}
	return &res, stop, err
}
