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

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
	"github.com/adminsched/scheduler-plugins/internal/playground/settle"
	"github.com/adminsched/scheduler-plugins/internal/schedtrace/recorder"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/admission"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// nodesManagedTimeout bounds the wait for KWOK to take the scenario's nodes
// over.
const nodesManagedTimeout = 2 * time.Minute

// runScenario starts a control plane and the scheduler, applies the
// plan and waits. It returns the result (also on a timeout, with a
// *TimeoutError), and stop, which stops the scheduler and the control plane,
// whenever the control plane started.
func runScenario(ctx context.Context, opts Options, sc *schedconfig.Config, plan *scenario.Plan, policies *admission.Result, progress io.Writer) (*report.Result, func(), error) {
	logger := klog.FromContext(ctx)
	fmt.Fprintf(progress, "starting the control plane (%s) from %s\n", strings.Join(localcluster.Binaries, ", "), opts.Assets)
	cp, err := localcluster.Start(opts.Assets, filepath.Dir(sc.Path))
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
	if err := os.WriteFile(sc.Kubeconfig, cp.KubeConfig, 0o600); err != nil {
		return nil, stop, err
	}
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, stop, err
	}
	now := time.Now
	if opts.now != nil {
		now = opts.now
	}
	// Created as KWOK starts them, so that KWOK need not write each one's
	// status once more.
	created := now()
	nodes := plan.NodeObjects(created)
	for i, n := range nodes {
		nodes[i] = localcluster.StartedNode(n, created)
	}
	if err := apply.CreateNodes(ctx, client, nodes, progress); err != nil {
		return nil, stop, err
	}
	// KWOK drops the events of a pod whose node it does not manage yet:
	// bound pods, and pods the scheduler binds, wait until it runs them all.
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	waitStart := time.Now()
	if _, err := localcluster.WaitNodesManaged(ctx, client, nodesManagedTimeout, names...); err != nil {
		return nil, stop, err
	}
	logger.V(2).Info("KWOK manages the nodes", "nodes", len(names), "waited", time.Since(waitStart))
	// The controllers run: CreateBoundPods waits for the DaemonSet
	// controller to see the bound DaemonSets before the scheduler starts.
	if err := apply.CreateBoundPods(ctx, client, plan.BoundDaemonSets, plan.BoundPods, true, progress); err != nil {
		return nil, stop, err
	}
	// Karpenter starts with the nodes and bound pods there, as it would
	// join a running cluster, and before the scheduler: no pod is judged
	// unschedulable before it looks.
	var as *autoscaler
	if opts.Karpenter {
		if as, err = startKarpenter(ctx, cp, opts.Assets, filepath.Dir(sc.Path), plan, progress); err != nil {
			return nil, stop, err
		}
	}
	if policies != nil {
		if err := applyPolicies(ctx, client, policies, opts.Configs[0], progress); err != nil {
			return nil, stop, err
		}
	}
	// The license driver publishes its seats before the scheduler starts,
	// as on a cluster where it runs.
	alive := cp.Err
	var server *licenseServer
	if plan.Licenses != nil {
		server = newLicenseServer(plan.Scenario.Licenses)
		driver, err := startLicenseDriver(ctx, cp.Config, plan.Licenses, server, progress)
		if err != nil {
			return nil, stop, err
		}
		stops = append(stops, driver.Stop)
		alive = func() error { return errors.Join(cp.Err(), driver.Err()) }
	}
	fmt.Fprintf(progress, "starting the scheduler from %s (profiles: %s)\n", sc.Source, strings.Join(sc.Profiles, ", "))
	var rec *recorder.Recorder
	if opts.Explain {
		rec = recorder.New()
	}
	rs, err := startScheduler(ctx, sc, rec)
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, rs.Stop)
	watcher, err := settle.Start(ctx, cp.Config, alive)
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, watcher.Stop)
	applier, err := apply.New(cp.Config, progress)
	if err != nil {
		return nil, stop, err
	}
	p := &pipeline{plan: plan, applier: applier, watcher: watcher, cache: rs.Scheduler.Cache, queue: rs.Scheduler.SchedulingQueue,
		licenses: server, progress: progress, autoscaler: as, alive: alive}

	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	err = p.applyObjects(wctx)
	var steps []report.StepResult
	if err == nil {
		steps, err = p.runSteps(wctx)
	}
	if err != nil && (ctx.Err() != nil || !timedOut(wctx, err)) {
		// Interrupted, or a failure that is not the timeout.
		return nil, stop, err
	}
	if err != nil {
		err = &TimeoutError{Config: sc.Source, Timeout: opts.Timeout, Err: err}
	}
	res, cerr := p.collect(ctx, client)
	if cerr != nil {
		return nil, stop, errors.Join(err, cerr)
	}
	res.Steps = steps
	if rec != nil {
		names, nerr := p.nodeNames(ctx)
		if nerr != nil {
			return nil, stop, errors.Join(err, nerr)
		}
		for i := range res.Pods {
			pr := &res.Pods[i]
			a, found := rec.Last(types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name})
			pr.Explain = report.Explain(a, found, names, pr.Node, opts.ExplainNodes)
		}
		if server != nil {
			if serr := explainSeats(ctx, client, plan.Licenses, server, p.ownedPods(), res.Pods); serr != nil {
				return nil, stop, errors.Join(err, serr)
			}
		}
	}
	return &res, stop, err
}

// startScheduler sets up the scheduler from sc and starts it, recording
// its attempts into rec unless nil. A failing setup is the config's fault (a
// plugin refused its args, say): an *InputError.
func startScheduler(ctx context.Context, sc *schedconfig.Config, rec *recorder.Recorder) (*localscheduler.Scheduler, error) {
	s, err := localscheduler.Setup(ctx, sc.Path)
	if err != nil {
		return nil, &InputError{Err: fmt.Errorf("scheduler config %s: %w", sc.Source, err)}
	}
	if rec != nil {
		recorder.Install(ctx, s.Scheduler, rec)
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
