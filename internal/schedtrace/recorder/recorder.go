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

// Package recorder records, for every pod, what the scheduling framework
// computed in the pod's last scheduling attempt: the PreFilter verdict, each
// node's Filter status, each plugin's raw and weighted score per node with
// the framework's own total, and the node the pod was reserved on.
//
// Install wraps the frameworks of a built scheduler (Scheduler.Profiles):
// the scheduling cycle calls the framework through that interface, so the
// wrapper sees the framework's results (RunPreFilterPlugins,
// RunFilterPluginsWithNominatedPods, RunScorePlugins,
// RunReservePluginsReserve) exactly as the scheduler gets them, and passes
// them on untouched. The plugins, their registry, the config, the extension
// points, the queue's enqueue extensions and pod signatures are those of the
// scheduler as built: nothing is re-instantiated. Calls that the framework
// makes on itself (preemption's dry runs, opportunistic batching's
// re-scoring) do not go through the wrapper and are not recorded.
//
// One behavior changes: the wrapper gives no opportunistic-batching hint
// (GetNodeHint returns ""), so that every pod goes through a full Filter and
// Score cycle on every node, as it would with the OpportunisticBatching
// feature off. With a hint, the scheduler would filter the hinted node only
// and bind the pod there unscored, leaving nothing to explain.
package recorder

import (
	"context"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
)

func statusOf(s *fwk.Status) *schedtrace.Status {
	if s.IsSuccess() {
		return nil
	}
	return &schedtrace.Status{Code: s.Code().String(), Plugin: s.Plugin(), Reasons: slices.Clone(s.Reasons())}
}

// Recorder keeps the last attempt of every pod. It is safe for concurrent
// use.
type Recorder struct {
	mu   sync.Mutex
	pods map[types.NamespacedName]*schedtrace.Attempt
}

// New returns an empty Recorder.
func New() *Recorder {
	return &Recorder{pods: map[types.NamespacedName]*schedtrace.Attempt{}}
}

// Last returns a copy of pod's last attempt.
func (r *Recorder) Last(pod types.NamespacedName) (schedtrace.Attempt, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.pods[pod]
	if !ok {
		return schedtrace.Attempt{}, false
	}
	return a.Clone(), true
}

func key(pod *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// begin starts a new attempt of pod. Call with r.mu held.
func (r *Recorder) begin(profile string, weights map[string]int, pod *v1.Pod) *schedtrace.Attempt {
	n := 1
	if prev, ok := r.pods[key(pod)]; ok && prev.UID == pod.UID {
		n = prev.Number + 1
	}
	a := &schedtrace.Attempt{Profile: profile, Pod: key(pod), UID: pod.UID, Number: n, Weights: weights, Filter: map[string]*schedtrace.Status{}}
	r.pods[key(pod)] = a
	return a
}

// current returns pod's current attempt, starting one if there is none.
// Call with r.mu held.
func (r *Recorder) current(profile string, weights map[string]int, pod *v1.Pod) *schedtrace.Attempt {
	if a, ok := r.pods[key(pod)]; ok && a.UID == pod.UID {
		return a
	}
	return r.begin(profile, weights, pod)
}

// Install makes sched record every scheduling attempt into r: it wraps
// every profile's framework and the failure handler. Call it after the
// scheduler is built and before it runs.
func Install(ctx context.Context, sched *scheduler.Scheduler, r *Recorder) {
	for name, f := range sched.Profiles {
		weights := map[string]int{}
		for _, p := range f.ListPlugins().Score.Enabled {
			weights[p.Name] = int(p.Weight)
		}
		sched.Profiles[name] = &recordingFramework{Framework: f, rec: r, weights: weights}
		klog.FromContext(ctx).V(2).Info("Recording scheduling attempts", "profile", name, "scoreWeights", weights)
	}
	next := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominatingInfo *fwk.NominatingInfo, start time.Time) {
		if podInfo != nil && podInfo.Pod != nil {
			r.mu.Lock()
			if a, ok := r.pods[key(podInfo.Pod)]; ok && a.UID == podInfo.Pod.UID {
				a.Failure = status.Message()
			}
			r.mu.Unlock()
		}
		next(ctx, f, podInfo, status, nominatingInfo, start)
	}
}

// recordingFramework passes every call to Framework and records the
// results of the scheduling cycle's calls.
type recordingFramework struct {
	framework.Framework
	rec     *Recorder
	weights map[string]int
}

// RunPreFilterPlugins starts a new attempt: the scheduling cycle calls it
// first.
func (f *recordingFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	res, status, plugins := f.Framework.RunPreFilterPlugins(ctx, state, pod)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	a := f.rec.begin(f.ProfileName(), f.weights, pod)
	a.PreFilter = statusOf(status)
	if !res.AllNodes() {
		a.PreFilterNodes = sets.List(res.NodeNames)
		a.PreFilterPlugins = sets.List(plugins)
	} else if a.PreFilter != nil {
		a.PreFilterPlugins = sets.List(plugins)
	}
	return res, status, plugins
}

func (f *recordingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	status := f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	f.rec.current(f.ProfileName(), f.weights, pod).Filter[info.Node().Name] = statusOf(status)
	return status
}

func (f *recordingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	if !status.IsSuccess() {
		return scores, status
	}
	recorded := make([]schedtrace.NodeScore, 0, len(scores))
	for _, s := range scores {
		raw := rawScores(s)
		ns := schedtrace.NodeScore{Node: s.Name, Total: s.TotalScore, Plugins: make([]schedtrace.PluginScore, 0, len(s.Scores))}
		for _, p := range s.Scores {
			ns.Plugins = append(ns.Plugins, schedtrace.PluginScore{Plugin: p.Name, Raw: raw[p.Name], Weighted: p.Score})
		}
		recorded = append(recorded, ns)
	}
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	f.rec.current(f.ProfileName(), f.weights, pod).Scores = recorded
	return scores, status
}

func (f *recordingFramework) RunPostFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	res, status := f.Framework.RunPostFilterPlugins(ctx, state, pod, m)
	if res != nil && res.NominatingInfo != nil && res.NominatedNodeName != "" {
		f.rec.mu.Lock()
		f.rec.current(f.ProfileName(), f.weights, pod).Nominated = res.NominatedNodeName
		f.rec.mu.Unlock()
	}
	return res, status
}

func (f *recordingFramework) RunReservePluginsReserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	status := f.Framework.RunReservePluginsReserve(ctx, state, pod, nodeName)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	f.rec.current(f.ProfileName(), f.weights, pod).Reserved = nodeName
	return status
}
