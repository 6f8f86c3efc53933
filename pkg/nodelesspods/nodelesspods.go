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
	// Registers NodeLessPodsArgs with the scheduler's config scheme for every
	// scheduler build that imports this plugin.
	_ "github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/apis/config/validation"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods/podcount"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = "NodeLessPods"

// NodeLessPods scores nodes by their count of counted pods.
type NodeLessPods struct {
	mode     config.ScoringMode
	relative bool
	selector *podSelector
	counts   *podcount.Cache
	// synced turns true once the pod informer has delivered its initial list
	// to counts; until then Score counts from the snapshot instead.
	synced    atomic.Bool
	hasSynced func() bool
}

var (
	_ fwk.ScorePlugin       = &NodeLessPods{}
	_ fwk.ScoreExtensions   = &NodeLessPods{}
	_ fwk.ReservePlugin     = &NodeLessPods{}
	_ fwk.SignPlugin        = &NodeLessPods{}
	_ fwk.EnqueueExtensions = &NodeLessPods{}
)

// New builds the plugin from its internal args (defaults apply when obj is
// nil) and subscribes its count cache to the scheduler's pod and node informers.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := argsFrom(obj)
	if err != nil {
		return nil, err
	}
	if err := validation.ValidateNodeLessPodsArgs(nil, args); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	selector, err := newPodSelector(args)
	if err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	if h == nil || h.SharedInformerFactory() == nil {
		return nil, fmt.Errorf("%s needs the scheduler's shared informer factory", Name)
	}
	pl := &NodeLessPods{
		mode:     args.Mode,
		relative: args.RelativeToCapacity,
		selector: selector,
		counts:   podcount.New(),
	}

	informers := h.SharedInformerFactory().Core().V1()
	podReg, err := informers.Pods().Informer().AddEventHandler(pl.counts.PodEventHandler(selector.counts))
	if err != nil {
		return nil, fmt.Errorf("%s: watching pods: %w", Name, err)
	}
	if _, err := informers.Nodes().Informer().AddEventHandler(pl.counts.NodeEventHandler()); err != nil {
		return nil, fmt.Errorf("%s: watching nodes: %w", Name, err)
	}
	pl.hasSynced = podReg.HasSynced
	klog.FromContext(ctx).V(2).Info("Plugin initialized", "plugin", Name, "mode", args.Mode,
		"podSelector", args.PodSelector, "namespaces", args.Namespaces,
		"ignoreDaemonSetPods", args.IgnoreDaemonSetPods, "relativeToCapacity", args.RelativeToCapacity)
	return pl, nil
}

func argsFrom(obj runtime.Object) (*config.NodeLessPodsArgs, error) {
	if obj == nil {
		return defaultArgs(), nil
	}
	args, ok := obj.(*config.NodeLessPodsArgs)
	if !ok {
		return nil, fmt.Errorf("want args of type NodeLessPodsArgs, got %T", obj)
	}
	if args == nil {
		return defaultArgs(), nil
	}
	return args, nil
}

// Name returns the plugin's name.
func (pl *NodeLessPods) Name() string { return Name }

// Score returns the node's load: its count of counted pods, or that count
// relative to its allocatable pods. NormalizeScore turns loads into scores.
func (pl *NodeLessPods) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	return pl.load(pl.count(node.Name, nodeInfo), nodeInfo.GetAllocatable().GetAllowedPodNumber()), nil
}

// count reads the node's counted pods from the cache once it has synced, and
// from the snapshot before, which is slower but right.
func (pl *NodeLessPods) count(nodeName string, nodeInfo fwk.NodeInfo) int {
	if !pl.synced.Load() {
		if !pl.hasSynced() {
			return pl.selector.countIn(nodeInfo)
		}
		pl.synced.Store(true)
	}
	return pl.counts.Count(nodeName)
}

// CountedPods returns how many counted pods the plugin holds for nodeName:
// bound there or reserved there by this scheduler. It is what Score reads, for
// debugging and tests.
func (pl *NodeLessPods) CountedPods(nodeName string) int {
	return pl.counts.Count(nodeName)
}

// ScoreExtensions returns the plugin itself: it normalizes its loads.
func (pl *NodeLessPods) ScoreExtensions() fwk.ScoreExtensions { return pl }

// Reserve counts the pod on the node the scheduler assumed it on.
func (pl *NodeLessPods) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if pl.selector.counts(pod) {
		pl.counts.Reserve(pod.UID, nodeName)
	}
	return nil
}

// Unreserve undoes Reserve; it is safe without a matching Reserve.
func (pl *NodeLessPods) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) {
	pl.counts.Unreserve(pod.UID, nodeName)
}

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
