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
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// skip is the status of an exempt pod. It is shared: the framework only
// reads a Skip status.
var skip = fwk.NewStatus(fwk.Skip)

// PreFilter returns Skip for exempt pods, so that Filter is not called.
func (pl *MaintenanceWindow) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if pl.isExempt(pod) {
		return nil, skip
	}
	return nil, nil
}

// PreFilterExtensions returns nil: nothing depends on the cycle's other pods.
func (pl *MaintenanceWindow) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node whose maintenance window is open, or opens within
// avoidWithin, and says until when. Preemption cannot end a window, so the
// rejection is unresolvable.
func (pl *MaintenanceWindow) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	if pl.isExempt(pod) {
		return nil
	}
	ws := pl.nodeWindows(klog.FromContext(ctx), node)
	if len(ws) == 0 {
		return nil
	}
	now := pl.clock.Now()
	start, until, blocked := blockedUntil(ws, now, pl.avoidWithin)
	if !blocked {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason(now, start, until))
}

// reason is the rejection of a node blocked by a window from start to until.
func reason(now, start, until time.Time) string {
	if start.After(now) {
		return fmt.Sprintf("node's maintenance window opens at %s (until %s)",
			start.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("node is in a maintenance window until %s", until.UTC().Format(time.RFC3339))
}
