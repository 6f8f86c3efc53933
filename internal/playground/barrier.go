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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
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
	namespaces := sets.New[string]()
	for _, t := range p.targets {
		if t.Namespace != "" {
			namespaces.Insert(t.Namespace)
		}
	}
	return cacheCaughtUp(ctx, p.cache, p.watcher.Live, namespaces)
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
