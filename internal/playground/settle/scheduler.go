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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// cacheCheckInterval is how often the scheduler's cache and queue are
// read: memory of this process, not an API request.
const cacheCheckInterval = 10 * time.Millisecond

// SchedulerCache is what Settle reads of the scheduler's cache.
type SchedulerCache interface {
	Dump() *internalcache.Dump
}

// SchedulerQueue is what Settle reads of the scheduler's queue.
type SchedulerQueue interface {
	PodsInActiveQ() []*corev1.Pod
	PodsInBackoffQ() []*corev1.Pod
	InFlightPods() []*corev1.Pod
}

// cacheCaughtUp waits until every pod of namespaces in c is live. The
// scheduler's informer and the watcher's receive the same events, each at
// its own pace: without this, the pods of the next object or step (a scale
// up right after a scale down) could be scored against pods already gone,
// and a consolidating profile would pack them onto the node that held the
// deleted ones.
func cacheCaughtUp(ctx context.Context, c SchedulerCache, live func(*corev1.Pod) bool, namespaces sets.Set[string]) error {
	var stale string
	err := wait.PollUntilContextCancel(ctx, cacheCheckInterval, true, func(context.Context) (bool, error) {
		stale = ""
		for _, n := range c.Dump().Nodes {
			for _, pi := range n.Pods {
				pod := pi.GetPod()
				if namespaces.Has(pod.Namespace) && !live(pod) {
					stale = pod.Namespace + "/" + pod.Name
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the scheduler to see pod %s go: %w", stale, err)
	}
	return nil
}

// queueDrained waits until the scheduler has nothing left to try for the
// pods of namespaces: none is queued (active or backing off) or being
// scheduled, and every pod its cache holds on a node is bound in owned's
// view too. A pod that an event made schedulable again (a seat released,
// say) has been tried once more then: it is bound, or unschedulable again.
func queueDrained(ctx context.Context, q SchedulerQueue, c SchedulerCache, owned func() []workload.OwnedPod, namespaces sets.Set[string]) error {
	var pending string
	err := wait.PollUntilContextCancel(ctx, cacheCheckInterval, true, func(context.Context) (bool, error) {
		for _, list := range [][]*corev1.Pod{q.PodsInActiveQ(), q.PodsInBackoffQ(), q.InFlightPods()} {
			for _, pod := range list {
				if namespaces.Has(pod.Namespace) {
					pending = "scheduler to try pod " + pod.Namespace + "/" + pod.Name
					return false, nil
				}
			}
		}
		unbound := map[types.UID]string{}
		for _, op := range owned() {
			if !workload.Bound(op.Pod) {
				unbound[op.Pod.UID] = op.Pod.Namespace + "/" + op.Pod.Name
			}
		}
		for _, n := range c.Dump().Nodes {
			for _, pi := range n.Pods {
				if name, ok := unbound[pi.GetPod().UID]; ok {
					pending = "binding of pod " + name + " to show"
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the %s: %w", pending, err)
	}
	return nil
}
