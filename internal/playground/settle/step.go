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

package settle

import (
	"context"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Settler decides when a run's step is done: it is the one place that
// waits for the API server's state (the Watcher), the scheduler's cache
// and queue, and an autoscaler.
type Settler struct {
	Watcher *Watcher
	// Cache and Queue are the scheduler's, which run in this process; nil
	// skips what reads them.
	Cache SchedulerCache
	Queue SchedulerQueue
	// Autoscaler, when set, adds nodes for unschedulable pods: a step is
	// settled only when every pod is bound or it is idle with some not.
	Autoscaler Autoscaler
	// IdleRule says when Autoscaler is idle; zero is DefaultIdleRule.
	IdleRule IdleRule
	// Progress receives progress lines; nil discards them.
	Progress io.Writer

	// lastLine is the autoscaler's last progress line, not repeated.
	lastLine string
}

// Change says what a step did, so that Settle knows what to wait for.
type Change struct {
	// Written are the targets the step wrote; the others are judged from
	// the watcher's caches without a read (see Watcher.WaitWritten).
	Written []workload.Target
	// Requeued says that the step changed something that may make the
	// targets' pods schedulable again (a license checkout, pods deleted):
	// the scheduler must have tried each such pod once more.
	Requeued bool
}

// Settle returns once the step that made change is done: the scheduler
// has tried again what change requeued, every target is settled (see
// Watcher.WaitWritten), the scheduler's cache has caught up with the pods
// gone, and, with an autoscaler, every pod is bound or the autoscaler is
// idle with some not (a pod unschedulable now may be bound once its node
// is Ready). It fails when ctx ends first, or the cluster stopped.
func (s *Settler) Settle(ctx context.Context, targets []workload.Target, change Change) error {
	namespaces := sets.New[string]()
	for _, t := range targets {
		if t.Namespace != "" {
			namespaces.Insert(t.Namespace)
		}
	}
	if change.Requeued && s.Queue != nil && s.Cache != nil {
		owned := func() []workload.OwnedPod { return s.Watcher.Pods(targets) }
		if err := queueDrained(ctx, s.Queue, s.Cache, owned, namespaces); err != nil {
			return err
		}
	}
	for {
		if err := s.Watcher.WaitWritten(ctx, targets, change.Written, s.Progress); err != nil {
			return err
		}
		if s.Cache != nil {
			if err := cacheCaughtUp(ctx, s.Cache, s.Watcher.Live, namespaces); err != nil {
				return err
			}
		}
		// Pods the step deleted requeue the pods they made room for (a
		// quota's, a node's) only once the cache has seen them go.
		if change.Requeued && s.Queue != nil && s.Cache != nil {
			if err := queueDrained(ctx, s.Queue, s.Cache, func() []workload.OwnedPod { return s.Watcher.Pods(targets) }, namespaces); err != nil {
				return err
			}
		}
		if s.Autoscaler == nil || !slices.ContainsFunc(s.Watcher.Pods(targets), func(op workload.OwnedPod) bool { return !workload.Bound(op.Pod) }) {
			return nil
		}
		done, err := s.waitIdle(ctx, targets)
		if err != nil || done {
			return err
		}
	}
}

func (s *Settler) progress() io.Writer {
	if s.Progress == nil {
		return io.Discard
	}
	return s.Progress
}
