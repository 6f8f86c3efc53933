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
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// skip is the status of an exempt pod. It is shared: the framework only
// reads a Skip status.
var skip = fwk.NewStatus(fwk.Skip)

// stateKey names the plugin's cycleData in the CycleState.
const stateKey fwk.StateKey = Name + "/cycle"

// cycleData is what PreFilter works out once for the cycle: the pod's
// expected runtime, read by Filter and Score, and the earliest end of the
// windows that rejected it.
type cycleData struct {
	earliest earliestEnd
	runtime  window.Runtime
}

// Clone returns the same value: runtime does not change after PreFilter,
// and earliest only goes down, safely from any goroutine, so a clone taken
// for a preemption dry run may share it.
func (c *cycleData) Clone() fwk.StateData { return c }

// earliestEnd is the earliest end, in Unix microseconds (RFC 3339 years
// reach 9999, past what nanoseconds hold), of the windows that rejected the
// pod in this cycle; 0 until one did. Filter runs on parallel goroutines:
// they lower it with compare-and-swap, and only the one that lowers it takes
// the retry queue's lock.
type earliestEnd struct{ micros atomic.Int64 }

// lower records t and reports whether it is earlier than any seen so far.
func (e *earliestEnd) lower(t time.Time) bool {
	m := t.UnixMicro()
	for {
		cur := e.micros.Load()
		if cur != 0 && cur <= m {
			return false
		}
		if e.micros.CompareAndSwap(cur, m) {
			return true
		}
	}
}

// PreFilter returns Skip, so that Filter is not called, while no node has a
// window and for exempt pods. Otherwise it gives the cycle its cycleData
// when there is something to keep: a retry queue, or a runtime that is known
// or comes from a pod group. A plain pod of unknown runtime without retries
// costs nothing.
func (pl *MaintenanceWindow) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if pl.signals.none() || pl.check.Exempt(pod) {
		return nil, skip
	}
	pl.writeCycleData(ctx, state, pod)
	return nil, nil
}

// writeCycleData works out the pod's runtime once for the cycle and keeps it
// with the cycle's earliestEnd in state, when there is something to keep.
func (pl *MaintenanceWindow) writeCycleData(ctx context.Context, state fwk.CycleState, pod *v1.Pod) {
	if state == nil {
		return
	}
	var rt window.Runtime
	if pl.runtimeAware && (podGroupName(pod) != "" || hasRuntimeHint(pod)) {
		logger := klog.FromContext(ctx)
		rt = pl.expectedRuntime(&logger, pod)
	}
	if pl.retries != nil || rt.Known || podGroupName(pod) != "" {
		state.Write(stateKey, &cycleData{runtime: rt})
	}
}

// hasRuntimeHint reports whether pod says anything about its runtime.
func hasRuntimeHint(pod *v1.Pod) bool {
	_, ok := pod.Annotations[ExpectedRuntimeAnnotation]
	return ok || pod.Spec.ActiveDeadlineSeconds != nil
}

// PreFilterExtensions returns nil: nothing depends on the cycle's other pods.
func (pl *MaintenanceWindow) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node whose maintenance window is open, or opens within
// avoidWithin, and says until when. Preemption cannot end a window, so the
// rejection is unresolvable.
//
// No cluster event marks the end of a window, so Filter also plans the
// pod's retry at that end. It does so here, with the time it judged by,
// because nothing later runs for every rejection: PostFilter does not run
// in pod-group cycles, and a window may close before it runs.
func (pl *MaintenanceWindow) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	now := pl.clock.Now()
	blocked, until, reason := pl.check.Blocks(klog.FromContext(ctx), pod, node, now,
		func() window.Runtime { return pl.runtimeOf(state, pod) })
	if !blocked {
		return nil
	}
	pl.retryAt(ctx, state, pod, until)
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason)
}

// retryAt plans pod's retry at until unless the cycle already planned one
// as early.
func (pl *MaintenanceWindow) retryAt(ctx context.Context, state fwk.CycleState, pod *v1.Pod, until time.Time) {
	// A maintenance of unknown end (a drain, Karpenter's replacement) ends
	// with an event on the node, not at a time.
	if pl.retries == nil || window.IsUnbounded(until) {
		return
	}
	if state != nil {
		if data, err := state.Read(stateKey); err == nil {
			if c, ok := data.(*cycleData); ok && !c.earliest.lower(until) {
				return
			}
		}
	}
	// No earliestEnd when PreFilter did not run (a profile that enables the
	// plugin at filter only): plan on every rejection.
	pl.retries.plan(klog.FromContext(ctx), pod, until)
}
