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
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Wait returns once every target is settled (see settle), writing a
// progress line ("scheduled 5/7 pods, 2 unschedulable") to progress, when
// not nil, whenever it changes. It reads each target's metadata once (so
// as not to judge it from a cache behind the caller's last write, see
// fresh.go), then looks again whenever an informer delivers an event,
// gathering the events of a short while, and never polls the API server;
// the first Wait on a resource starts an informer on it and waits until it
// has synced. It returns alive's error as soon as it has one (checked every
// second, and before each look),
// and when ctx ends first, ctx's error with the last progress line and the
// targets still waited for.
func (w *Watcher) Wait(ctx context.Context, targets []workload.Target, progress io.Writer) error {
	return w.WaitWritten(ctx, targets, targets, progress)
}

// WaitWritten is Wait for a caller that has written only the targets in
// written since its last Wait: the others that an earlier Wait saw settled
// are judged from the cache without a read, as the cache has caught up
// with them then and has only moved on since. Waiting after each of N
// objects so reads each once, not N(N+1)/2 times. A target written, or
// not seen by an earlier Wait, is read as Wait reads every target.
func (w *Watcher) WaitWritten(ctx context.Context, targets, written []workload.Target, progress io.Writer) error {
	logger := klog.FromContext(ctx)
	for i, t := range targets {
		if err := validTarget(t); err != nil {
			return fmt.Errorf("target %d (%s): %w", i, t, err)
		}
	}
	if w.ctx != nil && w.ctx.Err() != nil {
		return fmt.Errorf("the watcher is stopped: %w", context.Cause(w.ctx))
	}
	// Subscribed before the first look: no event after it is missed.
	wake := w.subscribe()
	defer w.unsubscribe(wake)
	if err := w.checkAlive(); err != nil {
		return err
	}
	stores := map[schema.GroupVersionResource]cache.Store{}
	for _, t := range targets {
		if _, ok := stores[t.Resource]; ok {
			continue
		}
		s, err := w.store(ctx, t.Resource)
		if err != nil {
			return w.timeoutError(ctx, []string{err.Error()})
		}
		stores[t.Resource] = s
	}
	bars := w.knownBarriers(targets, written)
	w.readBarriers(ctx, targets, bars)
	tick := time.NewTicker(w.aliveEvery)
	defer tick.Stop()
	var debounce <-chan time.Time
	pending := w.evaluate(targets, stores, bars, progress)
	for len(pending) > 0 {
		logger.V(5).Info("Not settled", "targets", pending)
		select {
		case <-ctx.Done():
			return w.timeoutError(ctx, pending)
		case <-tick.C:
			if err := w.checkAlive(); err != nil {
				return err
			}
			if slices.ContainsFunc(bars, func(b barrier) bool { return !b.read }) {
				// A failed read is tried again, at this pace.
				w.readBarriers(ctx, targets, bars)
				pending = w.evaluate(targets, stores, bars, progress)
			}
		case <-wake:
			if debounce == nil {
				debounce = time.After(w.debounce)
			}
		case <-debounce:
			debounce = nil
			if err := w.checkAlive(); err != nil {
				return err
			}
			pending = w.evaluate(targets, stores, bars, progress)
		}
	}
	w.remember(targets)
	return nil
}

func validTarget(t workload.Target) error {
	switch {
	case t.Kind == "":
		return fmt.Errorf("kind is not set")
	case t.Name == "":
		return fmt.Errorf("name is not set")
	case t.Resource.Resource == "" || t.Resource.Version == "":
		return fmt.Errorf("resource is %q: want the version and resource the object is served at", t.Resource.String())
	case t.UID == "":
		return fmt.Errorf("uid is not set: want the UID of the object as created")
	}
	return nil
}

func (w *Watcher) checkAlive() error {
	if w.alive == nil {
		return nil
	}
	return w.alive()
}

func (w *Watcher) timeoutError(ctx context.Context, pending []string) error {
	w.mu.Lock()
	last := w.lastProgress
	w.mu.Unlock()
	return fmt.Errorf("waiting for the controllers and the scheduler (%s; not settled: %s): %w", last, strings.Join(pending, ", "), ctx.Err())
}

// evaluate looks at every target in the caches, writes the progress line
// if it changed, and returns the targets not settled, with what they want.
// A target whose barrier (when bars is not nil) its cache has not caught
// up with is not settled.
func (w *Watcher) evaluate(targets []workload.Target, stores map[schema.GroupVersionResource]cache.Store, bars []barrier, progress io.Writer) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.evaluations++
	total, bound, unschedulable, gated := 0, 0, 0, 0
	var pending []string
	for i, t := range targets {
		// The cache's version first: the object read after it is at
		// least that new (see catchUp).
		storeRV := storeVersion(stores[t.Resource])
		obj := live(stores[t.Resource], t)
		st := settle(schema.GroupKind{Group: t.Resource.Group, Kind: t.Kind}, obj, w.owned(t))
		if bars != nil && !bars[i].catchUp(storeRV, obj) {
			st.Settled, st.Wants = false, bars[i].wants()
		}
		total += len(st.Pods)
		bound += len(st.Pods) - st.pending - st.unschedulable
		unschedulable += st.unschedulable
		gated += st.gated
		if !st.Settled {
			pending = append(pending, fmt.Sprintf("%s (wants %s)", t, st.Wants))
		}
	}
	line := fmt.Sprintf("scheduled %d/%d pods", bound, total)
	if unschedulable > 0 {
		line += fmt.Sprintf(", %d unschedulable", unschedulable)
	}
	if gated > 0 {
		line += fmt.Sprintf(", %d awaiting the OnDemandShare decision", gated)
	}
	if progress != nil && line != w.lastProgress && total > 0 {
		fmt.Fprintln(progress, line)
	}
	w.lastProgress = line
	return pending
}

// Pods returns the pods each target owns now that are not being deleted,
// in target order, then by pod name. It reads the caches only.
func (w *Watcher) Pods(targets []workload.Target) []workload.OwnedPod {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []workload.OwnedPod
	for _, t := range targets {
		// Gone or not, its pods are the same: the object is not needed.
		st := settle(schema.GroupKind{Group: t.Resource.Group, Kind: t.Kind}, nil, w.owned(t))
		for _, p := range st.Pods {
			out = append(out, workload.OwnedPod{Pod: p, Object: t.Object()})
		}
	}
	return out
}

// Live reports whether the watcher holds pod, by UID, and not as being
// deleted: false once the watcher has seen it go.
func (w *Watcher) Live(pod *corev1.Pod) bool {
	item, ok, err := w.pods.GetByKey(pod.Namespace + "/" + pod.Name)
	if err != nil || !ok {
		return false
	}
	p, isPod := item.(*corev1.Pod)
	return isPod && p.UID == pod.UID && p.DeletionTimestamp == nil
}
