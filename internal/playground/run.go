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
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
	"github.com/adminsched/scheduler-plugins/internal/playground/settle"
)

// ConfigRun is the scenario's run under one config: its result, and
// what ran.
type ConfigRun struct {
	report.Run
	// Plan is the scenario as compiled for the config's profiles.
	Plan *scenario.Plan
	// Nodes are the scenario's nodes as the run created them (their
	// ${now...} placeholders expanded at that time), then those its
	// addNodes steps created, then the nodes Karpenter added, by name.
	Nodes []*corev1.Node
}

// runScenario starts a cluster (see startCluster), applies the plan and
// runs its steps. It returns the run (also on a timeout, with a
// *TimeoutError), and stop, which stops the cluster, whenever the control
// plane started.
func runScenario(ctx context.Context, opts Options, sc *schedconfig.Config, plan *scenario.Plan, policies *admissionPolicies, progress io.Writer) (*ConfigRun, func(), error) {
	c, err := startCluster(ctx, opts, sc, plan, policies, progress)
	if c == nil {
		return nil, nil, err
	}
	if err != nil {
		return nil, c.stop, err
	}
	applier, err := apply.New(c.cp.Config, progress)
	if err != nil {
		return nil, c.stop, err
	}
	settler := &settle.Settler{Watcher: c.watcher, Cache: c.scheduler.Scheduler.Cache, Queue: c.scheduler.Scheduler.SchedulingQueue, Progress: progress}
	if c.autoscaler != nil {
		settler.Autoscaler = c.autoscaler
	}
	p := &pipeline{plan: plan, applier: applier, settler: settler, licenses: c.licenses, progress: progress, autoscaler: c.autoscaler, cluster: c, now: opts.clock()}
	if p.descheduler, err = prepareDescheduler(opts, sc); err != nil {
		return nil, c.stop, err
	}
	_, shared, err := sharePolicies(sc)
	if err != nil {
		return nil, c.stop, err
	}
	if len(shared) > 0 {
		p.share = &shareCounter{client: c.client, policies: shared}
	}

	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	err = p.applyObjects(wctx)
	var applied []report.PodResult
	if err == nil {
		applied, err = p.applied(wctx)
	}
	var steps []report.StepResult
	if err == nil {
		steps, err = p.runSteps(wctx)
	}
	if err != nil && (ctx.Err() != nil || !timedOut(wctx, err)) {
		// Interrupted, or a failure that is not the timeout.
		return nil, c.stop, err
	}
	if err != nil {
		err = &TimeoutError{Config: sc.Source, Timeout: opts.Timeout, Err: err}
	}
	res, cerr := p.collect(ctx, c.client)
	if cerr != nil {
		return nil, c.stop, errors.Join(err, cerr)
	}
	res.Steps, res.Applied, res.Share = steps, applied, p.shares
	run := &ConfigRun{Run: report.Run{Config: sc.Source, Result: res}, Plan: plan, Nodes: append(slices.Clip(c.nodes), p.added...)}
	if c.autoscaler != nil {
		added, aerr := c.autoscaler.addedNodes(ctx)
		if aerr != nil {
			return nil, c.stop, errors.Join(err, aerr)
		}
		for i := range added {
			run.Nodes = append(run.Nodes, &added[i])
		}
	}
	if c.recorder != nil {
		if xerr := explain(ctx, c, p, run, opts.ExplainNodes); xerr != nil {
			return nil, c.stop, errors.Join(err, xerr)
		}
	}
	return run, c.stop, err
}

// explain sets the explanation of each pod of run's result from the
// scheduler's last attempt, and of its seats when the scenario has
// licenses.
func explain(ctx context.Context, c *cluster, p *pipeline, run *ConfigRun, explainNodes int) error {
	names := make([]string, len(run.Nodes))
	for i, n := range run.Nodes {
		names[i] = n.Name
	}
	pods := run.Result.Pods
	// The pods after the objects and each step get their last attempt
	// too, which assertions with afterStep print.
	lists := [][]report.PodResult{pods, run.Result.Applied}
	for _, st := range run.Result.Steps {
		lists = append(lists, st.Pods)
	}
	for _, list := range lists {
		for i := range list {
			a, found := c.recorder.Last(types.NamespacedName{Namespace: list[i].Namespace, Name: list[i].Name})
			list[i].Explain = report.Explain(a, found, names, list[i].Node, explainNodes)
		}
	}
	if c.licenses == nil {
		return nil
	}
	return explainSeats(ctx, c.client, run.Plan.Licenses, c.licenses, p.ownedPods(), pods)
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
