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

package controller

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// FallbackSpotTimeout is the value of share.FallbackAnnotation on a pod
// decided on-demand because the spot pod before it in its slot waited too
// long (kep/46-on-demand-share/README.md §6e).
const FallbackSpotTimeout = "spot-timeout"

// maxBackoff caps how far repeated timeouts of recovered pods stretch a
// workload's recovery interval.
const maxBackoff = 8

// slotKey is one slot of one slot space.
type slotKey struct {
	space types.UID
	slot  int32
}

// mark is what the next pod decided into a slot inherits: a fallback to
// on-demand after old waited, or, when recovering, a return to spot.
// inherited marks a slot whose pod old was itself a fallback pod: its
// replacement stays on-demand, since only recovery returns a slot to spot.
type mark struct {
	recovering bool
	inherited  bool
	old        string
	waited     time.Duration
}

// workloadState is the memory of the timers, per workload. It lives only
// in this process: a restart forgets the marks, so a slot's next pod is
// decided spot again and may time out once more before it falls back.
// Only the worker that holds the workload's key touches it.
type workloadState struct {
	marks map[slotKey]mark
	// deleted are timed-out pods the cache still shows.
	deleted map[types.UID]bool
	// recovered are spot pods decided into a recovering slot, until bound;
	// a timeout of one of them doubles the recovery interval.
	recovered map[types.UID]bool
	// ownSpot are slot spaces whose pods require spot themselves: a
	// fallback cannot apply to them, so their waits are not timed.
	ownSpot      map[types.UID]bool
	backoff      time.Duration
	nextRecovery time.Time
}

type states struct {
	mu sync.Mutex
	m  map[Key]*workloadState
}

func (s *states) get(key Key) *workloadState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[key]
	if st == nil {
		st = &workloadState{marks: map[slotKey]mark{}, deleted: map[types.UID]bool{}, recovered: map[types.UID]bool{}, ownSpot: map[types.UID]bool{}, backoff: 1}
		s.m[key] = st
	}
	return st
}

func (s *states) drop(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// prune forgets pods and slot spaces the workload no longer has, and
// resets the backoff once a recovered pod is bound: spot fits again.
func (st *workloadState) prune(members []member) {
	uids, spaces := map[types.UID]bool{}, map[types.UID]bool{}
	for _, m := range members {
		uids[m.pod.UID], spaces[m.space] = true, true
		if st.recovered[m.pod.UID] && m.pod.Spec.NodeName != "" {
			delete(st.recovered, m.pod.UID)
			st.backoff = 1
		}
	}
	for _, set := range []map[types.UID]bool{st.deleted, st.recovered} {
		for uid := range set {
			if !uids[uid] {
				delete(set, uid)
			}
		}
	}
	for space := range st.ownSpot {
		if !spaces[space] {
			delete(st.ownSpot, space)
		}
	}
	for k := range st.marks {
		if !spaces[k.space] {
			delete(st.marks, k)
		}
	}
}

// holdFallbacks marks the slot of each active fallback pod, so that a pod
// replacing it (its node drained or consolidated away, or this controller
// restarted) is decided on-demand again rather than spot: spot did not fit
// when the slot fell back, and waiting for it again would only repeat the
// timeout. A slot returns to spot through recovery, which overwrites the
// mark.
func (st *workloadState) holdFallbacks(members []member) {
	for _, m := range members {
		if !isActive(m.pod) || m.pod.Annotations[share.FallbackAnnotation] == "" {
			continue
		}
		slot, err := strconv.ParseInt(m.pod.Labels[share.SlotLabel], 10, 32)
		if err != nil {
			continue
		}
		if k := (slotKey{m.space, int32(slot)}); !hasMark(st.marks, k) {
			st.marks[k] = mark{inherited: true, old: m.pod.Name}
		}
	}
}

func hasMark(marks map[slotKey]mark, k slotKey) bool {
	_, ok := marks[k]
	return ok
}

// spotWaitSince is when a decided, unbound spot pod became Unschedulable;
// false for any other pod.
func spotWaitSince(pod *v1.Pod) (time.Time, bool) {
	if !isActive(pod) || pod.Spec.NodeName != "" || hasGate(pod) || pod.Labels[share.ClassLabel] != string(share.Spot) {
		return time.Time{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
			if c.LastTransitionTime.IsZero() {
				return pod.CreationTimestamp.Time, true
			}
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// expireSpotWaits deletes the workload's spot pods that have been
// Unschedulable for p.SpotWaitTimeout and marks their slots fallback. It
// returns when the next wait expires (zero if none is running), for the
// requeue: nothing polls.
func (c *Controller) expireSpotWaits(ctx context.Context, p *policy.Policy, st *workloadState, members []member) (time.Time, error) {
	var wake time.Time
	if p.SpotWaitTimeout <= 0 {
		return wake, nil
	}
	now := c.clock.Now()
	for _, m := range members {
		since, ok := spotWaitSince(m.pod)
		if !ok || st.deleted[m.pod.UID] || st.ownSpot[m.space] || ownsSpot(p, m.pod) {
			continue
		}
		if expires := since.Add(p.SpotWaitTimeout); now.Before(expires) {
			wake = earliest(wake, expires)
			continue
		}
		if err := c.expire(ctx, p, st, m, now.Sub(since)); err != nil {
			return wake, err
		}
	}
	return wake, nil
}

// expire deletes a timed-out spot pod: it is unbound, so nothing is
// disrupted, and the preconditions make sure it is still the pod that
// waited (not bound meanwhile, not a new pod of the same name).
func (c *Controller) expire(ctx context.Context, p *policy.Policy, st *workloadState, m member, waited time.Duration) error {
	pod := m.pod
	uid, rv := pod.UID, pod.ResourceVersion
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	switch {
	case apierrors.IsNotFound(err):
		return nil // deleted by someone else: nothing timed out
	case apierrors.IsConflict(err):
		return errRetry{err}
	case err != nil:
		return fmt.Errorf("delete timed-out spot pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	st.deleted[uid] = true
	slot := slotOf(pod)
	st.marks[slotKey{m.space, slot}] = mark{old: pod.Name, waited: waited.Round(time.Second)}
	logger := klog.FromContext(ctx)
	if st.recovered[uid] {
		delete(st.recovered, uid)
		st.backoff = min(2*st.backoff, maxBackoff)
		logger.Info("A recovered pod timed out again; recovery slows down", "pod", klog.KObj(pod), "interval", p.RecoveryInterval*st.backoff)
	}
	logger.Info("Deleted a spot pod that waited too long; its slot falls back to on-demand", "pod", klog.KObj(pod), "slot", slot, "waited", waited)
	return nil
}

// fallbackOf is the mark a pod decided into slot of space as class
// inherits, and the class it then gets. A pod that requires spot itself
// keeps spot, and its slot space is no longer timed.
func (st *workloadState) fallbackOf(logger klog.Logger, pod *v1.Pod, k slotKey, class share.Class, own bool) (*mark, share.Class) {
	mk, ok := st.marks[k]
	if !ok || mk.recovering || class != share.Spot {
		return nil, class
	}
	if own {
		if !st.ownSpot[k.space] {
			logger.Info("Pods that require spot themselves cannot fall back to on-demand; their waits are not timed", "pod", klog.KObj(pod))
		}
		st.ownSpot[k.space] = true
		return nil, class
	}
	return &mk, share.OnDemand
}

// decided updates the marks after pod's decision into k as class.
func (st *workloadState) decided(uid types.UID, k slotKey, class share.Class) {
	mk, ok := st.marks[k]
	if !ok {
		return
	}
	delete(st.marks, k)
	if mk.recovering && class == share.Spot {
		st.recovered[uid] = true
	}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
