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

package playground

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

// Options of Play.
type Options struct {
	// Assets is the directory holding etcd, kube-apiserver,
	// kube-controller-manager and kwok (localcluster.Binaries).
	Assets string
	// Scenario is the path of the scenario file.
	Scenario string
	// Configs are the KubeSchedulerConfiguration files to run the scenario
	// with, one after the other, each on a fresh control plane: usually one,
	// or two to compare. At least one.
	Configs []string
	// Timeout bounds the wait for every object to be settled, steps
	// included, per config. It must be positive.
	Timeout time.Duration
	// WorkDir, which must exist, receives a directory per config, run-<n>:
	// the scheduler config as the scheduler reads it, the control plane's
	// kubeconfig and the logs of the control plane's programs. The caller removes it.
	WorkDir string
	// Progress receives one line per step and the wait's progress; nil
	// discards them.
	Progress io.Writer
	// Keep leaves the control plane and the scheduler of the last config up
	// when Play returns; Session.Stop stops them.
	Keep bool
	// Explain records every scheduling attempt (see package schedtrace)
	// and sets PodResult.Explain. The scheduler then gives no
	// opportunistic-batching hints: every pod is filtered and scored on
	// every node.
	Explain bool
	// ExplainNodes is how many candidate nodes an Explanation lists; 0 is
	// DefaultExplainNodes.
	ExplainNodes int
}

// Session is what Play returns once every config has run.
type Session struct {
	// Runs are the results, one per config, in the order of Options.Configs.
	Runs []Run
	// Kubeconfig reaches the control plane of the last config, which is
	// still up when Options.Keep is set (until Stop).
	Kubeconfig string

	stop func()
}

// Stop stops the control plane and the scheduler that Options.Keep left
// up. It does nothing otherwise, and on a second call.
func (s *Session) Stop() {
	if s != nil && s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// InputError is an error in what the caller gave: a scheduler config that
// does not load, validate or build a scheduler, or a scenario that does not
// load or validate. Play returns it before starting anything, except when
// the scheduler refuses the config (which needs the control plane).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// AssetsError says that a binary of the control plane is missing from
// Options.Assets. Nothing was started.
type AssetsError struct{ Err error }

func (e *AssetsError) Error() string { return e.Err.Error() }
func (e *AssetsError) Unwrap() error { return e.Err }

// TimeoutError says that not every pod of a run was bound or found
// unschedulable within Options.Timeout. Play still returns the Session,
// with the results collected when the time was up.
type TimeoutError struct {
	// Config is the run's scheduler config.
	Config  string
	Timeout time.Duration
	Err     error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("not every pod was bound or found unschedulable within %v: %v", e.Timeout, e.Err)
}
func (e *TimeoutError) Unwrap() error { return e.Err }

// Play checks every input (the scheduler configs, then the scenario against
// each config's profiles, then the assets) and then runs the scenario with
// each config in turn: it starts a control plane and the scheduler, creates
// the scenario's nodes and objects, waits and collects where every pod
// landed.
//
// The Session is returned when every config ran to the end, with nil error
// or, when runs timed out, their *TimeoutError (joined by errors.Join if
// more than one). Otherwise the Session is nil and the error is an
// *InputError, an *AssetsError, or the failure of a run (the control plane,
// the scheduler or the wait; its logs are in WorkDir), joined after the
// timeouts of earlier runs if any. Nothing started is left running then.
func Play(ctx context.Context, opts Options) (*Session, error) {
	logger := klog.FromContext(ctx)
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if len(opts.Configs) == 0 {
		return nil, &InputError{Err: errors.New("no scheduler config")}
	}
	if opts.Timeout <= 0 {
		return nil, &InputError{Err: fmt.Errorf("the timeout must be positive, got %v", opts.Timeout)}
	}

	// Every input is checked before anything starts.
	var prepared []*schedConfig
	for i, c := range opts.Configs {
		sc, err := prepareConfig(logger, c, filepath.Join(opts.WorkDir, fmt.Sprintf("run-%d", i+1)))
		if err != nil {
			return nil, &InputError{Err: err}
		}
		prepared = append(prepared, sc)
	}
	var scenario *Scenario
	for _, sc := range prepared {
		var err error
		if scenario, err = Load(opts.Scenario, sc.profiles); err != nil {
			return nil, &InputError{Err: fmt.Errorf("invalid scenario:\n%w", err)}
		}
	}
	if err := localcluster.CheckAssets(opts.Assets); err != nil {
		return nil, &AssetsError{Err: err}
	}

	session := &Session{}
	var timeouts []error
	for i, sc := range prepared {
		if len(prepared) > 1 {
			fmt.Fprintf(progress, "run %d/%d with %s\n", i+1, len(prepared), sc.source)
		}
		res, stop, err := runScenario(ctx, opts, sc, scenario, progress)
		if res == nil {
			if stop != nil {
				stop()
			}
			return nil, errors.Join(append(timeouts, err)...)
		}
		if err != nil {
			timeouts = append(timeouts, err)
		}
		session.Runs = append(session.Runs, Run{Config: sc.source, Result: *res})
		session.Kubeconfig = sc.kubeconfig
		if opts.Keep && i == len(prepared)-1 {
			session.stop = stop
		} else {
			stop()
		}
	}
	return session, errors.Join(timeouts...)
}

// runScenario starts a control plane and the scheduler, applies the
// scenario and waits. It returns the result (also on a timeout, with a
// *TimeoutError), and stop, which stops the scheduler and the control plane,
// whenever the control plane started.
func runScenario(ctx context.Context, opts Options, sc *schedConfig, s *Scenario, progress io.Writer) (*Result, func(), error) {
	logger := klog.FromContext(ctx)
	fmt.Fprintf(progress, "starting the control plane (%s) from %s\n", strings.Join(localcluster.Binaries, ", "), opts.Assets)
	cp, err := localcluster.Start(opts.Assets, filepath.Dir(sc.path))
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
	a := &Applier{Client: client, SchedulerName: sc.profiles[0], Progress: progress, Alive: cp.Err}
	if err := a.CreateNodes(ctx, s); err != nil {
		return nil, stop, err
	}
	fmt.Fprintf(progress, "starting the scheduler from %s (profiles: %s)\n", sc.source, strings.Join(sc.profiles, ", "))
	var rec *schedtrace.Recorder
	if opts.Explain {
		rec = schedtrace.NewRecorder()
	}
	rs, err := startScheduler(ctx, sc, rec)
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, rs.Stop)

	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	refs, err := a.Apply(wctx, s)
	if err == nil {
		err = a.Wait(wctx, refs)
	}
	var steps []StepResult
	if err == nil {
		steps, err = a.RunSteps(wctx, s, refs, s.NodeNames())
	}
	if err != nil && (ctx.Err() != nil || !timedOut(wctx, err)) {
		// Interrupted, or a failure that is not the timeout.
		return nil, stop, err
	}
	if err != nil {
		err = &TimeoutError{Config: sc.source, Timeout: opts.Timeout, Err: err}
	}
	res, cerr := Collect(ctx, client, s.NodeNames(), refs)
	if cerr != nil {
		return nil, stop, errors.Join(err, cerr)
	}
	res.Steps = steps
	if rec != nil {
		for i := range res.Pods {
			p := &res.Pods[i]
			a, found := rec.Last(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
			p.Explain = explain(a, found, s.NodeNames(), p.Node, opts.ExplainNodes)
		}
	}
	return &res, stop, err
}

// startScheduler sets up the scheduler from sc and starts it, recording
// its attempts into rec unless nil. A failing setup is the config's fault (a
// plugin refused its args, say): an *InputError.
func startScheduler(ctx context.Context, sc *schedConfig, rec *schedtrace.Recorder) (*localscheduler.Scheduler, error) {
	s, err := localscheduler.Setup(ctx, sc.path)
	if err != nil {
		return nil, &InputError{Err: fmt.Errorf("scheduler config %s: %w", sc.source, err)}
	}
	if rec != nil {
		schedtrace.Install(ctx, s.Scheduler, rec)
	}
	if err := s.Start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// timedOut reports whether err ended the wait because the time was up. A
// client's rate limiter refuses a request that would end after the deadline
// before the deadline has passed (x/time/rate's "would exceed context
// deadline", which wraps no sentinel error), so with a short timeout that
// refusal is the timeout too.
func timedOut(wctx context.Context, err error) bool {
	return wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "would exceed context deadline")
}
