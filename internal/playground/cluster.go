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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
	"github.com/adminsched/scheduler-plugins/internal/playground/settle"
	"github.com/adminsched/scheduler-plugins/internal/schedtrace/recorder"
)

// nodesManagedTimeout bounds the wait for KWOK to take the scenario's nodes
// over.
const nodesManagedTimeout = 2 * time.Minute

// cluster is one run's control plane and what runs on it before the
// scenario's objects are applied: its nodes and bound pods, Karpenter, the
// admission policies and the OnDemandShare controller they need, the
// license driver, the scheduler, and the watcher that settle reads.
type cluster struct {
	cp     *localcluster.ControlPlane
	client kubernetes.Interface
	// nodes are the scenario's nodes as created (placeholders expanded).
	nodes []*corev1.Node
	// autoscaler is Karpenter, nil without it.
	autoscaler *autoscaler
	// licenses is the scenario's license server, nil without licenses.
	licenses  *licenseServer
	scheduler *localscheduler.Scheduler
	// recorder holds the scheduler's attempts, nil unless Options.Explain.
	recorder *recorder.Recorder
	watcher  *settle.Watcher
	// stops stop what started, in reverse.
	stops []func()
}

// stop stops everything that started, last first; a second call does
// nothing.
func (c *cluster) stop() {
	for i := len(c.stops) - 1; i >= 0; i-- {
		c.stops[i]()
	}
	c.stops = nil
}

// startCluster starts a control plane for plan and, in the order a real
// cluster would have them, its nodes, bound pods, Karpenter, admission
// policies (and the OnDemandShare controller, when they gate pods),
// license driver and NodePoolQuota CRD, then the scheduler of sc. It returns nil
// when the control plane did not start; otherwise the cluster, to stop
// also on error.
func startCluster(ctx context.Context, opts Options, sc *schedconfig.Config, plan *scenario.Plan, policies *admissionPolicies, progress io.Writer) (*cluster, error) {
	logger := klog.FromContext(ctx)
	fmt.Fprintf(progress, "starting the control plane (%s) from %s\n", strings.Join(localcluster.Binaries, ", "), opts.Assets)
	var cpOpts []localcluster.Option
	if policies != nil {
		cpOpts = append(cpOpts, localcluster.WithMutatingAdmissionPolicy())
	}
	cp, err := localcluster.Start(opts.Assets, filepath.Dir(sc.Path), cpOpts...)
	if err != nil {
		return nil, err
	}
	c := &cluster{cp: cp}
	c.stops = append(c.stops, func() {
		if err := cp.Stop(); err != nil {
			logger.Error(err, "Stopping the control plane")
		}
	})
	if err := os.WriteFile(sc.Kubeconfig, cp.KubeConfig, 0o600); err != nil {
		return c, err
	}
	if c.client, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return c, err
	}
	if err := c.createNodes(ctx, opts, plan, progress); err != nil {
		return c, err
	}
	// Karpenter starts with the nodes and bound pods there, as it would
	// join a running cluster, and before the scheduler: no pod is judged
	// unschedulable before it looks.
	if opts.Karpenter {
		if c.autoscaler, err = startKarpenter(ctx, cp, opts.Assets, filepath.Dir(sc.Path), plan, progress); err != nil {
			return c, err
		}
	}
	alive := cp.Err
	if policies != nil {
		if err := policies.apply(ctx, c.client, opts.Configs[0], progress); err != nil {
			return c, err
		}
	}
	if policies != nil && len(policies.shared) > 0 {
		share, err := startShareController(ctx, c.client, policies.shared, progress)
		if err != nil {
			return c, err
		}
		c.stops = append(c.stops, share.stop)
		alive = func() error { return errors.Join(cp.Err(), share.Err()) }
	}
	// The license driver publishes its seats before the scheduler starts,
	// as on a cluster where it runs.
	if plan.Licenses != nil {
		c.licenses = newLicenseServer(plan.Scenario.Licenses)
		driver, err := startLicenseDriver(ctx, cp.Config, plan.Licenses, c.licenses, progress)
		if err != nil {
			return c, err
		}
		c.stops = append(c.stops, driver.Stop)
		before := alive
		alive = func() error { return errors.Join(before(), driver.Err()) }
	}
	// NodePoolQuota's New fails unless the API server serves its kind.
	if needsNodePoolQuotaCRD(sc, plan) {
		if err := installNodePoolQuotaCRD(ctx, cp.Config, progress); err != nil {
			return c, err
		}
	}
	fmt.Fprintf(progress, "starting the scheduler from %s (profiles: %s)\n", sc.Source, strings.Join(sc.Profiles, ", "))
	if opts.Explain {
		c.recorder = recorder.New()
	}
	if c.scheduler, err = startScheduler(ctx, sc, c.recorder); err != nil {
		return c, err
	}
	c.stops = append(c.stops, c.scheduler.Stop)
	if c.watcher, err = settle.Start(ctx, cp.Config, alive); err != nil {
		return c, err
	}
	c.stops = append(c.stops, c.watcher.Stop)
	return c, nil
}

// createNodes creates plan's nodes, waits until KWOK runs them, and
// creates the bound pods.
func (c *cluster) createNodes(ctx context.Context, opts Options, plan *scenario.Plan, progress io.Writer) error {
	created := opts.clock()()
	c.nodes = plan.NodeObjects(created)
	if err := c.startNodes(ctx, c.nodes, created, progress); err != nil {
		return err
	}
	// The controllers run: CreateBoundPods waits for the DaemonSet
	// controller to see the bound DaemonSets before the scheduler starts.
	return apply.CreateBoundPods(ctx, c.client, plan.BoundDaemonSets, plan.BoundPods, true, progress)
}

// startNodes creates nodes, as KWOK starts them at created, and waits
// until KWOK runs them all: it drops the events of a pod whose node it
// does not manage yet (bound pods, and pods the scheduler binds).
func (c *cluster) startNodes(ctx context.Context, nodes []*corev1.Node, created time.Time, progress io.Writer) error {
	// Created as KWOK starts them, so that KWOK need not write each one's
	// status once more.
	names := make([]string, len(nodes))
	for i, n := range nodes {
		// The spec's own conditions (MaintenancePlanned, say) follow the
		// kubelet's; the API server keeps a node's status on create.
		started := localcluster.StartedNode(n, created)
		started.Status.Conditions = append(started.Status.Conditions, scenario.ScenarioConditions(n)...)
		nodes[i] = started
		names[i] = n.Name
	}
	if err := apply.CreateNodes(ctx, c.client, nodes, progress); err != nil {
		return err
	}
	waitStart := time.Now()
	if _, err := localcluster.WaitNodesManaged(ctx, c.client, nodesManagedTimeout, names...); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("KWOK manages the nodes", "nodes", len(names), "waited", time.Since(waitStart))
	return nil
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

// clock is opts.now, or time.Now.
func (opts Options) clock() func() time.Time {
	if opts.now != nil {
		return opts.now
	}
	return time.Now
}
