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

// Package nodelesspods provides NodeLessPods, a score plugin that ranks nodes
// by how many (counted) pods they hold: fewest first to spread, most first to
// consolidate. See README.md in this folder.
package nodelesspods

import (
	"context"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	// Importing scheme registers NodeLessPodsArgs with the scheduler's config
	// scheme for every scheduler build that imports this plugin.
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods/podcount"
	"github.com/adminsched/scheduler-plugins/pkg/podgroupcycle"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = config.NodeLessPodsName

// NodeLessPods scores nodes by their count of counted pods.
type NodeLessPods struct {
	mode     config.NodeLessPodsMode
	relative bool
	selector *podSelector
	// counts memoizes each node's count of counted pods in the NodeInfo that
	// Score is handed, the scheduler's own view of every bound and assumed pod.
	counts *podcount.Cache
	// lookups counts Score's count lookups, a cycle's at once in
	// NormalizeScore, so that Score writes nothing shared (see metrics.go).
	lookups atomic.Uint64
}

var (
	_ fwk.ScorePlugin       = &NodeLessPods{}
	_ fwk.ScoreExtensions   = &NodeLessPods{}
	_ fwk.ReservePlugin     = &NodeLessPods{}
	_ fwk.SignPlugin        = &NodeLessPods{}
	_ fwk.EnqueueExtensions = &NodeLessPods{}
)

// New builds the plugin from its internal args (defaults apply when obj is
// nil). It registers no informer handlers: every count comes from the
// scheduler's snapshot.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := scheme.PluginArgs[*config.NodeLessPodsArgs](Name, obj)
	if err != nil {
		return nil, err
	}
	selector, err := newPodSelector(args)
	if err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, fmt.Errorf("%s needs the scheduler's snapshot lister", Name)
	}
	pl := &NodeLessPods{
		mode:     args.Mode,
		relative: args.RelativeToCapacity,
		selector: selector,
		counts:   podcount.New(selector.counts, h.SnapshotSharedLister().NodeInfos()),
	}
	registerMetrics()
	live.join(ctx, pl, h.ProfileName())
	klog.FromContext(ctx).V(2).Info("Plugin initialized", "plugin", Name, "mode", args.Mode,
		"podSelector", args.PodSelector, "namespaces", args.Namespaces,
		"ignoreDaemonSetPods", args.IgnoreDaemonSetPods, "relativeToCapacity", args.RelativeToCapacity)
	return pl, nil
}

// Name returns the plugin's name.
func (pl *NodeLessPods) Name() string { return Name }

// Score returns the node's load: its count of counted pods, or that count
// relative to its allocatable pods. NormalizeScore turns loads into scores.
func (pl *NodeLessPods) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	if nodeInfo.Node() == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	return pl.load(pl.counts.Count(nodeInfo, inPodGroupCycle(state)), nodeInfo), nil
}

// inPodGroupCycle tells the memo whether state is a pod-group cycle's: only
// those run on a snapshot that may hold assumed pods. A caller with no state
// is treated as one, which is always correct.
func inPodGroupCycle(state fwk.CycleState) bool {
	return state == nil || podgroupcycle.Is(state)
}

// ScoreExtensions returns the plugin itself: it normalizes its loads.
func (pl *NodeLessPods) ScoreExtensions() fwk.ScoreExtensions { return pl }

// Reserve does nothing. Earlier releases dropped the node's memo here; the
// memo now checks itself against the NodeInfo (see package podcount), so
// profiles that enable the plugin at score only are as correct as others.
// It stays so that profiles which enable NodeLessPods at reserve explicitly
// still load; it will be removed in a later release.
func (pl *NodeLessPods) Reserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return nil
}

// Unreserve does nothing; see Reserve.
func (pl *NodeLessPods) Unreserve(context.Context, fwk.CycleState, *v1.Pod, string) {}

// SignPod lets the profile keep opportunistic batching: the score depends on
// node state only, never on the pod, so the pod adds no fragment.
func (pl *NodeLessPods) SignPod(context.Context, *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}

// EventsToRegister returns no events: the plugin never rejects a pod, so no
// cluster event can make a rejected pod schedulable on its account.
func (pl *NodeLessPods) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}
