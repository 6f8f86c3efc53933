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

// Package playground is the engine of bin/playground: Play takes a
// decoded scenario (LoadScenario) and scheduler configs (package
// schedconfig), then, for each config, starts a cluster (cluster.go) and
// runs the scenario through the pipeline, one package per step:
//
//	scenario  decode once, check, compile into a Plan per config (pure)
//	apply     put the nodes, bound pods and objects on the cluster
//	settle    decide when each object and step is done: every pod bound or
//	          unschedulable, the scheduler caught up, Karpenter idle
//	report    the Result and its text and JSON forms (pure)
//
// and snapshot, which reads a live cluster into a scenario.
package playground

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
)

// Options of Play.
type Options struct {
	// Assets is the directory holding etcd, kube-apiserver,
	// kube-controller-manager and kwok (localcluster.Binaries).
	Assets string
	// Scenario is the scenario, decoded once (LoadScenario) and planned
	// for each config's profiles.
	Scenario *scenario.File
	// Configs are the KubeSchedulerConfiguration files to run the scenario
	// with, one after the other, each on a fresh control plane: usually one,
	// or two to compare. At least one.
	Configs []string
	// Builtin holds files built into the caller, by the name that Configs
	// give them: such a name is read from here, not from the file system,
	// and names the file in errors and results.
	Builtin map[string][]byte
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
	// when Play returns; Session.Stop stops them. Unless that config has a
	// profile named default-scheduler, the default scheduler is started
	// too once the run is done (see Session.DefaultScheduler): a pod
	// created with no schedulerName is scheduled, as on a real cluster.
	Keep bool
	// Explain records every scheduling attempt (see package schedtrace)
	// and sets PodResult.Explain. The scheduler then gives no
	// opportunistic-batching hints: every pod is filtered and scored on
	// every node.
	Explain bool
	// ExplainNodes is how many candidate nodes an Explanation lists; 0 is
	// report.DefaultExplainNodes.
	ExplainNodes int
	// Karpenter runs a real Karpenter (its KWOK provider, from Assets: see
	// `make karpenter`) on each control plane, started before the
	// scenario's objects are applied, which may then hold NodePools and
	// KWOKNodeClasses; a scenario without a NodePool gets defaultNodePool.
	// The wait then lasts until every pod is bound, or Karpenter is idle
	// with some not, and the results list the nodes it added.
	Karpenter bool
	// AdmissionPolicies renders the PlacementPolicy rules and the
	// OnDemandShare policies of Configs[0] as MutatingAdmissionPolicies
	// (pkg/placementpolicy/admission, pkg/ondemandshare/admission) and
	// applies them in every run before the scenario's objects: what
	// autoscalers see of them. With OnDemandShare policies it also runs the
	// OnDemandShare controller for the whole run (and what Keep leaves
	// up), since the pods they gate wait for its decision. Configs[0] must
	// hold a rule or a policy to render.
	AdmissionPolicies bool
	// Descheduler runs the scenario's deschedule steps.
	Descheduler Descheduler

	// now is the clock the nodes' annotation placeholders expand with
	// (${now+2h}, ...); nil is time.Now. For tests.
	now func() time.Time
}

// Session is what Play returns once every config has run.
type Session struct {
	// Runs are the runs, one per config, in the order of Options.Configs.
	Runs []ConfigRun
	// Kubeconfig reaches the control plane of the last config, which is
	// still up when Options.Keep is set (until Stop).
	Kubeconfig string
	// Profiles are the scheduler names that the kept scheduler serves: the
	// last config's profiles, the first being the scenario's default.
	Profiles []string
	// DefaultScheduler says that Options.Keep also left the default
	// scheduler up (the in-tree profile, default-scheduler), which takes
	// the pods that name no scheduler, as on a real cluster: the config
	// has no profile of that name. It started after the run.
	DefaultScheduler bool
	// ShareController says that the OnDemandShare controller runs too
	// (Options.AdmissionPolicies with OnDemandShare policies).
	ShareController bool

	stop func()
}

// Results are the results of s.Runs, for report's outputs.
func (s *Session) Results() []report.Run {
	out := make([]report.Run, len(s.Runs))
	for i, r := range s.Runs {
		out[i] = r.Run
	}
	return out
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
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	prepared, plans, policies, err := check(ctx, opts)
	if err != nil {
		return nil, err
	}

	session := &Session{}
	var timeouts []error
	for i, sc := range prepared {
		if len(prepared) > 1 {
			fmt.Fprintf(progress, "run %d/%d with %s\n", i+1, len(prepared), sc.Source)
		}
		run, stop, err := runScenario(ctx, opts, sc, plans[i], policies, progress)
		if run == nil {
			if stop != nil {
				stop()
			}
			return nil, errors.Join(append(timeouts, err)...)
		}
		if err != nil {
			timeouts = append(timeouts, err)
		}
		session.Runs = append(session.Runs, *run)
		session.Kubeconfig = sc.Kubeconfig
		if !opts.Keep || i < len(prepared)-1 {
			stop()
			continue
		}
		session.Profiles = sc.Profiles
		session.ShareController = policies != nil && len(policies.shared) > 0
		session.stop, session.DefaultScheduler, err = keepUp(ctx, sc, stop, len(timeouts) == 0, progress)
		if err != nil {
			return nil, errors.Join(append(timeouts, err)...)
		}
	}
	return session, errors.Join(timeouts...)
}

// LoadScenario reads and decodes the scenario file at path, or from
// builtin when it holds that name (a built-in scenario's base, if any, is
// still read from the file system). An error is an *InputError.
func LoadScenario(path string, builtin map[string][]byte) (*scenario.File, error) {
	var f *scenario.File
	var err error
	if data, ok := builtin[path]; ok {
		f, err = scenario.Decode(path, data)
	} else {
		f, err = scenario.Load(path)
	}
	if err != nil {
		return nil, &InputError{Err: scenario.Invalid(err)}
	}
	return f, nil
}

// Check checks every input of opts as Play does, and starts nothing: nil,
// an *InputError or an *AssetsError. It writes the scheduler configs as
// the scheduler would read them into opts.WorkDir.
func Check(ctx context.Context, opts Options) error {
	_, _, _, err := check(ctx, opts)
	return err
}

// CheckInputs is Check without the binaries of opts.Assets: nil or an
// *InputError. A caller that has yet to get the binaries (built into a
// cache, say) reports bad input first, before that costly step.
func CheckInputs(ctx context.Context, opts Options) error {
	_, _, _, err := checkInputs(ctx, opts)
	return err
}

// check is Play's checks of its inputs, then of its binaries: the prepared
// configs, the plan per config and the rendered policies, or an
// *InputError or *AssetsError.
func check(ctx context.Context, opts Options) ([]*schedconfig.Config, []*scenario.Plan, *admissionPolicies, error) {
	prepared, plans, policies, err := checkInputs(ctx, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := localcluster.CheckAssets(opts.Assets); err != nil {
		return nil, nil, nil, &AssetsError{Err: err}
	}
	if opts.Karpenter {
		if err := karpenter.CheckAssets(opts.Assets); err != nil {
			return nil, nil, nil, &AssetsError{Err: fmt.Errorf("--karpenter: %w", err)}
		}
	}
	if err := checkDeschedulerBinary(opts); err != nil {
		return nil, nil, nil, err
	}
	return prepared, plans, policies, nil
}

// checkInputs is check's part that reads no binaries: every input is checked
// before anything starts.
func checkInputs(ctx context.Context, opts Options) ([]*schedconfig.Config, []*scenario.Plan, *admissionPolicies, error) {
	logger := klog.FromContext(ctx)
	if len(opts.Configs) == 0 {
		return nil, nil, nil, &InputError{Err: errors.New("no scheduler config")}
	}
	if opts.Timeout <= 0 {
		return nil, nil, nil, &InputError{Err: fmt.Errorf("the timeout must be positive, got %v", opts.Timeout)}
	}

	var prepared []*schedconfig.Config
	for i, c := range opts.Configs {
		data, err := schedconfig.Read(c, opts.Builtin)
		if err != nil {
			return nil, nil, nil, &InputError{Err: configNotFound(c, err)}
		}
		sc, err := schedconfig.Prepare(logger, c, data, filepath.Join(opts.WorkDir, fmt.Sprintf("run-%d", i+1)))
		if err != nil {
			return nil, nil, nil, &InputError{Err: err}
		}
		prepared = append(prepared, sc)
	}
	if opts.Scenario == nil {
		return nil, nil, nil, &InputError{Err: errors.New("no scenario")}
	}
	// A plan per config: its first profile is the scheduler of the pods
	// that name none.
	plans := make([]*scenario.Plan, len(prepared))
	for i, sc := range prepared {
		var err error
		if plans[i], err = opts.Scenario.Plan(sc.Profiles); err != nil {
			return nil, nil, nil, &InputError{Err: scenario.Invalid(err)}
		}
	}
	if found, _ := karpenterObjects(plans[0]); len(found) > 0 && !opts.Karpenter {
		return nil, nil, nil, &InputError{Err: fmt.Errorf("invalid scenario: %s: Karpenter's kinds need Karpenter: run with --karpenter (Options.Karpenter)", strings.Join(found, ", "))}
	}
	if err := checkDescheduler(opts); err != nil {
		return nil, nil, nil, err
	}
	var policies *admissionPolicies
	if opts.AdmissionPolicies {
		var err error
		if policies, err = renderPolicies(prepared[0]); err != nil {
			return nil, nil, nil, &InputError{Err: err}
		}
	}
	return prepared, plans, policies, nil
}
