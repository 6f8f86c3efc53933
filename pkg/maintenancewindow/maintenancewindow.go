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

// Package maintenancewindow implements MaintenanceWindow, a Filter and Score
// plugin that keeps new pods off nodes about to be drained: nodes announce
// planned maintenance windows in an annotation; a node whose window is open
// (or opens within avoidWithin) is filtered out, and a node whose next window
// opens within the horizon scores lower the sooner it opens. See README.md in
// this folder.
package maintenancewindow

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/adminsched/scheduler-plugins/apis/config"
	// Importing scheme registers MaintenanceWindowArgs with the scheduler's
	// config scheme for every scheduler build that imports this plugin.
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = config.MaintenanceWindowName

// MaintenanceWindow filters and scores nodes by their maintenance windows.
type MaintenanceWindow struct {
	avoidWithin time.Duration
	horizon     time.Duration
	// runtimeAware lets a pod of known runtime use a node until
	// runtimeMargin before its window opens.
	runtimeAware  bool
	runtimeMargin time.Duration

	clock clock.WithDelayedExecution
	// check is the Filter decision, shared with the descheduler's evictor.
	// Karpenter's NodeClaims are given to it once, in New (see
	// watchNodeClaims), before the first cycle: check.SetNodeClaims is not
	// synchronized with Filter and Score.
	check *window.Checker
	// sources are where nodes announce windows (check's): the annotation,
	// the providers' signals, the node lifecycle conditions and the
	// NodeClaims, each unless its arg is off.
	sources *window.Sources
	// handle gives the scheduler's view of pod groups; nil in unit tests
	// that build the plugin alone.
	handle fwk.Handle

	// retries activates pods rejected by windows when the windows end; nil
	// when the handle offers no pod informer.
	retries *retryQueue
	// nodes is the scheduler's node lister, read only by the metrics'
	// scrape; nil when the handle offers no informers.
	nodes corelisters.NodeLister
	// signals counts the nodes with a window, for PreFilter and PreScore
	// to skip while there is none; nil when the handle offers no informers.
	signals *nodeSignals
}

var (
	_ fwk.PreFilterPlugin   = &MaintenanceWindow{}
	_ fwk.FilterPlugin      = &MaintenanceWindow{}
	_ fwk.PostFilterPlugin  = &MaintenanceWindow{}
	_ fwk.PreScorePlugin    = &MaintenanceWindow{}
	_ fwk.ScorePlugin       = &MaintenanceWindow{}
	_ fwk.ScoreExtensions   = &MaintenanceWindow{}
	_ fwk.SignPlugin        = &MaintenanceWindow{}
	_ fwk.EnqueueExtensions = &MaintenanceWindow{}
)

// New builds the plugin from its internal args (defaults apply when obj is
// nil), on the real clock.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newWithClock(ctx, obj, h, clock.RealClock{})
}

// newWithClock is New with the clock given: tests pass a fake one.
func newWithClock(ctx context.Context, obj runtime.Object, h fwk.Handle, c clock.WithDelayedExecution) (*MaintenanceWindow, error) {
	args, err := scheme.PluginArgs[*config.MaintenanceWindowArgs](Name, obj)
	if err != nil {
		return nil, err
	}
	check, err := window.New(args)
	if err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	pl := &MaintenanceWindow{
		avoidWithin:   args.AvoidWithin.Duration,
		horizon:       args.Horizon.Duration,
		runtimeAware:  args.RuntimeAware,
		runtimeMargin: args.RuntimeMargin.Duration,
		clock:         c,
		check:         check,
		sources:       check.Sources(),
		handle:        h,
	}
	registerMetrics()
	profile := profileName(h)
	pl.retries = newRetryQueue(ctx, h, c, newRetryMetrics(profile))
	pl.nodes = nodeLister(h)
	watchNodeClaims(ctx, h, check, args.Karpenter)
	pl.signals = newNodeSignals(ctx, h, pl.sources)
	live.join(ctx, pl, profile)
	klog.FromContext(ctx).V(2).Info("Plugin initialized", "plugin", Name, "annotationKey", args.AnnotationKey,
		"avoidWithin", pl.avoidWithin, "horizon", pl.horizon, "ignoreDaemonSetPods", args.IgnoreDaemonSetPods,
		"exemptPodSelector", args.ExemptPodSelector, "runtimeAware", pl.runtimeAware, "runtimeMargin", pl.runtimeMargin,
		"providerSignals", args.ProviderSignals, "providerWindowDuration", args.ProviderWindowDuration.Duration,
		"nodeConditions", args.NodeConditions, "plannedWithoutTime", args.PlannedWithoutTime, "karpenter", args.Karpenter)
	return pl, nil
}

// Name returns the plugin's name.
func (pl *MaintenanceWindow) Name() string { return Name }

// GKEMaintenanceLabel is the node label by which GKE announces a VM's
// upcoming host maintenance: its start, in Unix epoch seconds.
const GKEMaintenanceLabel = window.GKEMaintenanceLabel

// The plugin's signature fragments: what it reads of the pod.
const (
	// signatureKey is whether the pod is exempt.
	signatureKey = "MaintenanceWindow.isExempt()"
	// runtimeSignatureKey is the pod's own expected runtime in
	// nanoseconds, -1 when unknown (or the look-ahead is off).
	runtimeSignatureKey = "MaintenanceWindow.expectedRuntime()"
	// groupSignatureKey is the pod's group, namespace/name, "" for none:
	// a member is judged by its group's runtime.
	groupSignatureKey = "v1.Pod.Spec.SchedulingGroup.PodGroupName"
)

// SignPod signs a pod with what the plugin reads of it: whether it is
// exempt, its expected runtime and its pod group. Pods that agree on these
// get the same filter and score results, so the profile keeps opportunistic
// batching. Whether any node has a window is the cluster's state, not the
// pod's, and stays out: the framework filters a batch's hinted node again in
// the new pod's own cycle, whose PreFilter sees the current count.
func (pl *MaintenanceWindow) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	runtime := int64(-1)
	group := ""
	if pl.runtimeAware {
		if rt, _ := window.PodRuntime(pod); rt.Known {
			runtime = int64(rt.D)
		}
		if name := podGroupName(pod); name != "" {
			group = pod.Namespace + "/" + name
		}
	}
	return []fwk.SignFragment{
		{Key: signatureKey, Value: pl.check.Exempt(pod)},
		{Key: runtimeSignatureKey, Value: runtime},
		{Key: groupSignatureKey, Value: group},
	}, nil
}
