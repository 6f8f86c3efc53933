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

package maintenancewindow

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// PreScore returns Skip, so that Score is not called, while no node has a
// window (every node would score the same), for exempt pods and when the
// horizon is 0. Otherwise, when PreFilter wrote no cycleData (it skipped
// while the count was 0, or the profile enables the plugin at score
// without preFilter), it works out the pod's runtime for the cycle.
func (pl *MaintenanceWindow) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if pl.horizon <= 0 || pl.signals.none() || pl.check.Exempt(pod) {
		return skip
	}
	if state != nil && pl.runtimeAware {
		if _, err := state.Read(stateKey); err != nil {
			pl.writeCycleData(ctx, state, pod)
		}
	}
	return nil
}

// Score returns how long until the node's next window opens, in seconds,
// capped at the horizon: a node without a window within the horizon gets
// the horizon, a node whose window is open 0. A pod of known runtime is
// scored by fitScore instead.
func (pl *MaintenanceWindow) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	horizon := int64(pl.horizon.Seconds())
	ws := pl.sources.Windows(klog.FromContext(ctx), node)
	now := pl.clock.Now()
	until, ok := window.NextStart(ws, now)
	if rt := pl.runtimeOf(state, pod); rt.Known {
		return pl.fitScore(rt, now, until, ok), nil
	}
	if !ok {
		return horizon, nil
	}
	return min(int64(until.Seconds()), horizon), nil
}

// fitScore is the raw score, on NormalizeScore's scale of 0 to the horizon
// in seconds, of a node for a pod of runtime rt whose next window opens in
// until (hasWindow false: none). The nodes that the pod leaves before their
// window opens rank first, the sooner after the pod's end the better
// (slack 0: the horizon; slack of the horizon or more: a tenth of it, as a
// node without a window): they are the capacity that a long-running pod
// cannot use, and the nodes without a window stay free for those. A node
// whose window would interrupt the pod scores 0.
func (pl *MaintenanceWindow) fitScore(rt window.Runtime, now time.Time, until time.Duration, hasWindow bool) int64 {
	horizon := int64(pl.horizon.Seconds())
	if horizon <= 0 {
		return 0 // NormalizeScore gives every node MaxScore
	}
	floor := horizon / 10
	if !hasWindow {
		return floor
	}
	if !pl.check.EndsBefore(rt, now, now.Add(until)) {
		return 0
	}
	slack := int64((until - rt.D - pl.runtimeMargin).Seconds())
	return floor + (horizon-min(slack, horizon))*(horizon-floor)/horizon
}

// ScoreExtensions returns the plugin itself: it normalizes its scores.
func (pl *MaintenanceWindow) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore maps the time until the next window linearly onto
// [MinScore, MaxScore] over the horizon, not over the candidates: a node
// whose window opens in 23 hours of a 24-hour horizon scores 95 whatever
// the other nodes do, and nodes without a window score MaxScore.
func (pl *MaintenanceWindow) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	horizon := int64(pl.horizon.Seconds())
	for i := range scores {
		if horizon <= 0 {
			scores[i].Score = fwk.MaxNodeScore
			continue
		}
		s := min(max(scores[i].Score, 0), horizon)
		scores[i].Score = fwk.MinNodeScore + s*(fwk.MaxNodeScore-fwk.MinNodeScore)/horizon
	}
	return nil
}
