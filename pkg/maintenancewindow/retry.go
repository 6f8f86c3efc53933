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
	"k8s.io/utils/clock"
)

// PostFilter runs when no node fits the pod. No cluster event marks the end
// of a window, so without help a pod rejected during one would wait for the
// scheduler's unschedulable timeout (5 minutes). PostFilter finds the
// earliest end among the windows that rejected the pod and, at that time,
// activates the pod (moves it back to the active queue). It never makes the
// pod schedulable itself: it returns Unschedulable, as informational
// PostFilter plugins do.
func (pl *MaintenanceWindow) PostFilter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	logger := klog.FromContext(ctx)
	if pl.handle == nil || pl.isExempt(pod) {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	nodes, err := statuses.NodesForStatusCode(pl.handle.SnapshotSharedLister().NodeInfos(), fwk.UnschedulableAndUnresolvable)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	now := pl.clock.Now()
	var earliest time.Time
	for _, ni := range nodes {
		node := ni.Node()
		if node == nil || statuses.Get(node.Name).Plugin() != Name {
			continue
		}
		if _, until, blocked := blockedUntil(pl.nodeWindows(logger, node), now, pl.avoidWithin); blocked &&
			(earliest.IsZero() || until.Before(earliest)) {
			earliest = until
		}
	}
	if !earliest.IsZero() {
		pl.retryAt(logger, pod, earliest)
	}
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

// retryAt activates pod at the time at, or keeps an earlier retry already
// planned for it.
func (pl *MaintenanceWindow) retryAt(logger klog.Logger, pod *v1.Pod, at time.Time) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if r, ok := pl.retries[pod.UID]; ok {
		if !r.at.After(at) {
			return
		}
		r.timer.Stop()
	}
	key := pod.Namespace + "/" + pod.Name
	uid := pod.UID
	var timer clock.Timer
	timer = pl.clock.AfterFunc(at.Sub(pl.clock.Now()), func() {
		pl.mu.Lock()
		if r, ok := pl.retries[uid]; ok && r.timer == timer {
			delete(pl.retries, uid)
		}
		pl.mu.Unlock()
		logger.V(4).Info("Maintenance window ended, retrying the pod", "pod", klog.KObj(pod))
		pl.handle.Activate(logger, map[string]*v1.Pod{key: pod})
	})
	pl.retries[uid] = retry{at: at, timer: timer}
	logger.V(4).Info("Pod will be retried when the maintenance window ends", "pod", klog.KObj(pod), "at", at.UTC())
}

// pendingRetries returns how many pods wait for a window to end.
func (pl *MaintenanceWindow) pendingRetries() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.retries)
}
