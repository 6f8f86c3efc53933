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

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// Events' reasons.
const (
	// ReasonDecided is Normal, on a pod decided into a slot and class.
	ReasonDecided = "Decided"
	// ReasonUnknownPolicy is a Warning: the pod's policy label names no
	// policy this controller has; it is ungated undecided.
	ReasonUnknownPolicy = "UnknownPolicy"
	// ReasonNotCounted is a Warning: the policy does not count the pod's
	// workload kind; it is ungated undecided.
	ReasonNotCounted = "WorkloadKindNotCounted"
	// ReasonSpotWaitTimeout is a Warning, on a pod decided on-demand
	// because the spot pod before it in its slot waited too long.
	ReasonSpotWaitTimeout = "SpotWaitTimeout"
	// ReasonDecisionRejected is a Warning: the API server refused the
	// decision; the pod is ungated undecided rather than stranded.
	ReasonDecisionRejected = "DecisionRejected"
)

// FieldManager is the field manager of the controller's writes.
const FieldManager = "ondemandshare-controller"

// Decision is what the hook hears of each pod the controller ungates. Pod
// is the pod as it was before the write. Class is empty for a pod ungated
// without a decision; Reason then says why. Fallback is the value of
// share.FallbackAnnotation for a pod decided on-demand in place of spot.
type Decision struct {
	Workload Key
	Pod      *v1.Pod
	Slot     int32
	Class    share.Class
	Reason   string
	Fallback string
}

// errRetry marks a write that lost a race (Conflict, NotFound): the key is
// requeued and decided again from a fresh cache.
type errRetry struct{ err error }

func (e errRetry) Error() string { return "retry: " + e.err.Error() }
func (e errRetry) Unwrap() error { return e.err }

// decidedPod is pod with its decision: slot and class labels, the class's
// required node affinity (unless the pod requires the class itself) and
// tolerations, the deletion cost, and our gate removed. The API server lets
// a gated pod's update do all of it (kep/46-on-demand-share/README.md §1).
func decidedPod(pod *v1.Pod, p *policy.Policy, slot int32, class share.Class, own bool) *v1.Pod {
	out := pod.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels[share.SlotLabel] = strconv.FormatInt(int64(slot), 10)
	out.Labels[share.ClassLabel] = string(class)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[share.DeletionCostAnnotation] = share.DeletionCost(slot)
	reqs, tols := p.Requirements(class)
	if !own {
		out.Spec.Affinity = share.RequireClass(out.Spec.Affinity, reqs)
	}
	for i := range tols {
		if !hasToleration(out.Spec.Tolerations, &tols[i]) {
			out.Spec.Tolerations = append(out.Spec.Tolerations, tols[i])
		}
	}
	out.Spec.SchedulingGates = withoutGate(out.Spec.SchedulingGates)
	return out
}

// Karpenter (v1.15) weighs a pod at 1 + deletion cost/2^27, counts a weight
// of 0 or less as nothing, and calls a node whose pods weigh nothing "Empty"
// (pkg/utils/disruption EvictionCost, ComputeRescheduleDisruptionCost;
// Candidate.IsEmpty): at -2^27 or lower, a Running fallback pod gets its node
// deleted. fallbackFloor keeps the weight at 1/4 or more.
const (
	fallbackFloor = -(1 << 26) // below the cost of slots up to 2^26-1
	fallbackSpan  = 1 << 25
)

// fallbackCost is below the cost of every slot (share.DeletionCost) up to
// 2^26-1, lower for a higher slot (scale-down removes it first), and above
// -2^27 so that Karpenter still counts the pod.
func fallbackCost(slot int32) string {
	return strconv.FormatInt(fallbackFloor-int64(min(max(slot, 0), fallbackSpan)), 10)
}

func hasToleration(tols []v1.Toleration, t *v1.Toleration) bool {
	for i := range tols {
		if tols[i].MatchToleration(t) {
			return true
		}
	}
	return false
}

// withoutGate removes our gate only; other gates (Kueue's...) stay.
func withoutGate(gates []v1.PodSchedulingGate) []v1.PodSchedulingGate {
	var out []v1.PodSchedulingGate
	for _, g := range gates {
		if g.Name != share.SchedulingGate {
			out = append(out, g)
		}
	}
	return out
}

// write updates pod to updated, guarded by the cached resourceVersion.
func (c *Controller) write(ctx context.Context, updated *v1.Pod) error {
	_, err := c.client.CoreV1().Pods(updated.Namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: FieldManager})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return errRetry{err}
	}
	return err
}

// decide writes one pod's decision; false when the API server refused it
// and the pod was ungated undecided instead. fb, when set, is the timeout
// the pod falls back for: it goes on-demand with share.FallbackAnnotation
// and a deletion cost below every slot's, so scale-down removes it first.
func (c *Controller) decide(ctx context.Context, key Key, p *policy.Policy, m member, slot int32, class share.Class, own bool, fb *mark) (bool, error) {
	logger := klog.FromContext(ctx)
	pod := m.pod
	c.exp.expect(key, pod.UID, m.space, slot)
	out := decidedPod(pod, p, slot, class, own)
	if fb != nil {
		out.Annotations[share.FallbackAnnotation] = FallbackSpotTimeout
		out.Annotations[share.DeletionCostAnnotation] = fallbackCost(slot)
	}
	err := c.write(ctx, out)
	if err != nil {
		c.exp.drop(key, pod.UID)
		if !apierrors.IsInvalid(err) {
			return false, fmt.Errorf("decide pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		return false, c.ungate(ctx, key, pod, ReasonDecisionRejected, "the API server refused slot %d (%s): %v", slot, class, err)
	}
	logger.V(2).Info("Decided pod", "pod", klog.KObj(pod), "slot", slot, "class", class, "ownClass", own)
	c.recorder.Eventf(pod, nil, v1.EventTypeNormal, ReasonDecided, "Decide", "Slot %d of %s %s: %s (policy %s)", slot, key.Kind, key.Name, class, key.Policy)
	d := Decision{Workload: key, Pod: pod, Slot: slot, Class: class}
	if fb != nil {
		d.Fallback = FallbackSpotTimeout
		if fb.inherited {
			logger.Info("Decided pod on-demand: it replaces a fallback pod", "pod", klog.KObj(pod), "slot", slot, "previous", fb.old)
			c.recorder.Eventf(pod, nil, v1.EventTypeNormal, ReasonSpotWaitTimeout, "Decide", "Slot %d of %s %s stays on-demand: pod %s before it had fallen back, and only recovery returns the slot to spot (policy %s)", slot, key.Kind, key.Name, fb.old, key.Policy)
		} else {
			logger.Info("Decided pod on-demand: the spot pod before it waited too long", "pod", klog.KObj(pod), "slot", slot, "previous", fb.old, "waited", fb.waited)
			c.recorder.Eventf(pod, nil, v1.EventTypeWarning, ReasonSpotWaitTimeout, "Decide", "Slot %d of %s %s falls back to on-demand: pod %s waited %s for spot (policy %s)", slot, key.Kind, key.Name, fb.old, fb.waited, key.Policy)
		}
	}
	countDecision(d)
	c.hook(d)
	return true, nil
}

// ungate removes only our gate from pod, undecided, with a Warning event.
func (c *Controller) ungate(ctx context.Context, key Key, pod *v1.Pod, reason, format string, args ...any) error {
	out := pod.DeepCopy()
	out.Spec.SchedulingGates = withoutGate(out.Spec.SchedulingGates)
	if err := c.write(ctx, out); err != nil {
		return fmt.Errorf("ungate pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	note := fmt.Sprintf(format, args...)
	klog.FromContext(ctx).Info("Ungated pod without a decision", "pod", klog.KObj(pod), "reason", reason, "detail", note)
	c.recorder.Eventf(pod, nil, v1.EventTypeWarning, reason, "Ungate", "Ungated without an on-demand share decision: %s", note)
	d := Decision{Workload: key, Pod: pod, Reason: reason}
	countDecision(d)
	c.hook(d)
	return nil
}
