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

package playground

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

// cacheCheckInterval is how often schedulerCaughtUp reads the scheduler's
// cache: memory of this process, not an API request.
const cacheCheckInterval = 10 * time.Millisecond

// schedulerCaughtUp waits until the scheduler's cache holds no pod of the
// scenario's namespaces that the watcher has seen deleted or going. The
// scheduler's informer and the watcher's receive the same events, each at
// its own pace: without this, the pods of the next object or step (a scale
// up right after a scale down) could be scored against pods already gone,
// and a consolidating profile would pack them onto the node that held the
// deleted ones.
func (p *pipeline) schedulerCaughtUp(ctx context.Context) error {
	if p.cache == nil {
		return nil
	}
	return cacheCaughtUp(ctx, p.cache, p.watcher.Live, p.namespaces())
}

// namespaces are the namespaces of the targets.
func (p *pipeline) namespaces() sets.Set[string] {
	namespaces := sets.New[string]()
	for _, t := range p.targets {
		if t.Namespace != "" {
			namespaces.Insert(t.Namespace)
		}
	}
	return namespaces
}

// schedulerTried waits until the scheduler has nothing left to try for the
// pods of the scenario's namespaces: none is queued to be scheduled (active
// or backing off) or being scheduled, and every pod its cache holds on a
// node is bound in the watcher's view too. A pod that an event made
// schedulable again (a seat released, say) has been tried once more then:
// it is bound, or unschedulable again. Without a queue it returns at once.
func (p *pipeline) schedulerTried(ctx context.Context) error {
	if p.queue == nil || p.cache == nil {
		return nil
	}
	return queueDrained(ctx, p.queue, p.cache, p.ownedPods, p.namespaces())
}

func queueDrained(ctx context.Context, q schedulerQueue, c schedulerCache, owned func() []workload.OwnedPod, namespaces sets.Set[string]) error {
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

// cacheCaughtUp waits until every pod of namespaces in c is live.
func cacheCaughtUp(ctx context.Context, c schedulerCache, live func(*corev1.Pod) bool, namespaces sets.Set[string]) error {
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

// schedulerCache is what schedulerCaughtUp reads of the scheduler.
type schedulerCache interface {
	Dump() *internalcache.Dump
}

// schedulerQueue is what schedulerTried reads of the scheduler's queue.
type schedulerQueue interface {
	PodsInActiveQ() []*corev1.Pod
	PodsInBackoffQ() []*corev1.Pod
	InFlightPods() []*corev1.Pod
}
