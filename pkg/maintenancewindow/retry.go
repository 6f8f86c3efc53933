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
	"container/heap"
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"
)

// No cluster event marks the end of a window, so without help a pod
// rejected during one would wait for the scheduler's unschedulable timeout
// (5 minutes). retryQueue activates (moves back to the active queue) each
// pod a window rejected, when the earliest window that rejected it ends.
//
// Invariants, all under mu:
//   - byUID and h hold the same entries, one per pod, h a min-heap on at;
//   - an entry exists only for a pod that the scheduler's pod informer held,
//     unbound, when the entry was made: its handler drops the entry when the
//     pod is bound, ends, or is deleted, so entries never outnumber the
//     pending pods;
//   - one goroutine and at most one timer serve all pods: the timer is set
//     for h[0] (or for an entry dropped since, and then finds nothing due);
//   - once the scheduler's context is done, nothing is kept or activated.
type retryQueue struct {
	clock clock.WithDelayedExecution
	// handle is asked to Activate at the time: the scheduler gives it its
	// queue only after the plugins are built.
	handle fwk.Handle
	// pods is the scheduler's pod informer's store, checked before an entry
	// is made (see plan).
	pods cache.Indexer
	// metrics counts entries made, fired and dropped.
	metrics retryMetrics

	mu      sync.Mutex
	h       retryHeap
	byUID   map[types.UID]*retryEntry
	stopped bool

	// wake tells run that h[0] changed; one pending signal is enough.
	wake chan struct{}
	// done is closed when run has returned.
	done chan struct{}
	// armedFor is the time the timer was set for, zero while run works out
	// the next one. Tests wait for it before they move the fake clock, which
	// would otherwise move the timer too: the timer is set relative to now.
	armedFor time.Time
}

type retryEntry struct {
	pod   *v1.Pod
	at    time.Time
	index int // in h
}

// retryHeap is a min-heap of entries on at, for container/heap.
type retryHeap []*retryEntry

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h retryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *retryHeap) Push(x any) {
	e := x.(*retryEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *retryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// newRetryQueue starts the retries of one plugin instance, stopped when ctx
// (the scheduler's) is done. It returns nil, and the pods wait for the
// scheduler's unschedulable timeout, when h offers no pod informer: without
// one, nothing would drop the entries of deleted pods.
func newRetryQueue(ctx context.Context, h fwk.Handle, c clock.WithDelayedExecution, m retryMetrics) *retryQueue {
	logger := klog.FromContext(ctx)
	if h == nil || h.SharedInformerFactory() == nil {
		logger.V(2).Info("No pod informer: pods rejected by a maintenance window are retried on the scheduler's unschedulable timeout only", "plugin", Name)
		return nil
	}
	informer := h.SharedInformerFactory().Core().V1().Pods().Informer()
	q := &retryQueue{
		clock:   c,
		handle:  h,
		pods:    informer.GetIndexer(),
		metrics: m,
		byUID:   map[types.UID]*retryEntry{},
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	reg, err := informer.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		UpdateFunc: q.onUpdate,
		DeleteFunc: q.onDelete,
	}, cache.HandlerOptions{Logger: &logger})
	if err != nil {
		logger.Error(err, "Cannot watch pods: pods rejected by a maintenance window are retried on the scheduler's unschedulable timeout only", "plugin", Name)
		return nil
	}
	go func() {
		defer close(q.done)
		q.run(ctx)
		if err := informer.RemoveEventHandler(reg); err != nil {
			logger.V(4).Info("Removing the pod event handler", "plugin", Name, "err", err)
		}
	}()
	return q
}

// plan activates pod at the time at, or keeps an earlier retry planned for it.
func (q *retryQueue) plan(logger klog.Logger, pod *v1.Pod, at time.Time) {
	switch q.add(pod, at) {
	case planned:
		logger.V(4).Info("Pod will be retried when the maintenance window ends", "pod", klog.KObj(pod), "at", at.UTC())
	case notPending:
		logger.V(5).Info("Pod is not pending in the pod informer, no retry planned", "pod", klog.KObj(pod))
	}
}

// addResult says what add did, for plan to log outside the lock.
type addResult int

const (
	planned        addResult = iota // a new entry, or an earlier time
	earlierPlanned                  // the entry was due as early already
	notPending                      // the informer holds no such pending pod
	stoppedAlready                  // the scheduler has stopped
)

// add is plan under the lock.
func (q *retryQueue) add(pod *v1.Pod, at time.Time) addResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return stoppedAlready
	}
	e, ok := q.byUID[pod.UID]
	switch {
	case ok && !e.at.After(at):
		return earlierPlanned
	case ok:
		e.at = at
		heap.Fix(&q.h, e.index)
	default:
		// Checked under mu: the informer updates its store before it calls
		// the handler, so a pod deleted or bound before this check is seen
		// here, and one deleted or bound after it finds its entry to drop.
		if !q.pending(pod) {
			return notPending
		}
		e = &retryEntry{pod: pod, at: at}
		heap.Push(&q.h, e)
		q.byUID[pod.UID] = e
		q.metrics.planned.Inc()
	}
	if e.index == 0 {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return planned
}

// pending reports whether the informer holds pod, unbound and not finished.
func (q *retryQueue) pending(pod *v1.Pod) bool {
	obj, ok, err := q.pods.GetByKey(pod.Namespace + "/" + pod.Name)
	if err != nil || !ok {
		return false
	}
	p, isPod := obj.(*v1.Pod)
	return isPod && p.UID == pod.UID && !settled(p)
}

// settled reports whether pod needs no retry any more: bound or finished.
func settled(pod *v1.Pod) bool {
	return pod.Spec.NodeName != "" || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// onUpdate drops the entry of a pod that got bound or finished. Only that
// transition is looked at: pod status updates are frequent, and a pod that
// was settled already has no entry (see plan).
func (q *retryQueue) onUpdate(oldObj, newObj any) {
	oldPod, ok := oldObj.(*v1.Pod)
	if !ok || settled(oldPod) {
		return
	}
	if newPod, ok := newObj.(*v1.Pod); ok && settled(newPod) {
		q.forget(newPod.UID)
	}
}

// onDelete drops the entry of a deleted pod.
func (q *retryQueue) onDelete(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		q.forget(pod.UID)
	}
}

func (q *retryQueue) forget(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.byUID[uid]; ok {
		heap.Remove(&q.h, e.index)
		delete(q.byUID, uid)
		q.metrics.dropped.Inc()
	}
}

// run activates the pods whose retry is due, then sleeps until the next one
// is, or h[0] changes, or ctx is done.
func (q *retryQueue) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		q.mu.Lock()
		q.armedFor = time.Time{}
		var next time.Time
		var due map[string]*v1.Pod
		now := q.clock.Now()
		for len(q.h) > 0 && !q.h[0].at.After(now) {
			e := heap.Pop(&q.h).(*retryEntry)
			delete(q.byUID, e.pod.UID)
			if due == nil {
				due = map[string]*v1.Pod{}
			}
			due[e.pod.Namespace+"/"+e.pod.Name] = e.pod
		}
		if len(q.h) > 0 {
			next = q.h[0].at
		}
		q.mu.Unlock()

		var timer clock.Timer
		var fired <-chan time.Time
		if !next.IsZero() {
			timer = q.clock.NewTimer(next.Sub(now))
			fired = timer.C()
			q.mu.Lock()
			q.armedFor = next
			q.mu.Unlock()
		}
		if len(due) > 0 && ctx.Err() == nil {
			logger.V(4).Info("Maintenance window ended, retrying pods", "pods", len(due))
			q.handle.Activate(logger, due)
			q.metrics.fired.Add(float64(len(due)))
		}
		select {
		case <-ctx.Done():
		case <-q.wake:
		case <-fired:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			q.mu.Lock()
			q.stopped = true
			q.h, q.byUID = nil, nil
			q.mu.Unlock()
			return
		}
	}
}

// len returns how many pods wait for a window to end.
func (q *retryQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.byUID)
}

// PostFilter does nothing and returns Unschedulable. Filter plans the retry
// at a window's end, at the time of the rejection: PostFilter used to, but
// it does not run in pod-group cycles, and by the time it runs the window
// may have closed. It is kept because profiles may enable the plugin at
// postFilter explicitly, and the framework refuses a plugin enabled at an
// extension point it does not implement.
func (pl *MaintenanceWindow) PostFilter(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

// pendingRetries returns how many pods wait for a window to end.
func (pl *MaintenanceWindow) pendingRetries() int {
	if pl.retries == nil {
		return 0
	}
	return pl.retries.len()
}
