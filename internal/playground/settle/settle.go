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

// Package settle decides when a playground run's object or step is done,
// with one call, Settler.Settle: by watching the cluster through
// informers, until the objects a scenario applied have settled (their
// controllers made the pods they want and every pod they own, through
// controller owner references, is bound or unschedulable), the scheduler's
// cache and queue have caught up, and an autoscaler, when one runs, is
// idle.
package settle

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// state is what a target has of pods, and whether it is settled.
type state struct {
	// Pods are the pods it owns that are not being deleted, by name.
	Pods    []*corev1.Pod
	Settled bool
	// Wants says why it is not settled, for the timeout error.
	Wants string
	// pending and unschedulable count Pods neither bound nor unschedulable,
	// and unschedulable; gated those of pending that wait for the
	// OnDemandShare controller's decision.
	pending, unschedulable, gated int
}

// awaitsDecision reports whether pod still carries the OnDemandShare gate:
// the controller has yet to decide its capacity class and ungate it, after
// which the scheduler tries it. Whatever its conditions say, it is not
// settled.
func awaitsDecision(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == share.SchedulingGate })
}

// rule decides for the kinds whose controllers have their own notion of
// done. object is a new typed object an unstructured one converts into;
// nil leaves it unstructured.
type rule struct {
	object func() runtime.Object
	settle func(obj runtime.Object, s *state)
}

// rules is the one table of kinds with a rule of their own; any other kind
// settles by settleOther.
var rules = map[schema.GroupKind]rule{
	{Kind: "Pod"}: {func() runtime.Object { return &corev1.Pod{} }, func(_ runtime.Object, s *state) {
		s.Settled = len(s.Pods) == 1 && s.pending == 0
		s.Wants = "bound or unschedulable"
	}},
	{Group: "apps", Kind: "Deployment"}: {func() runtime.Object { return &appsv1.Deployment{} }, func(obj runtime.Object, s *state) {
		d := obj.(*appsv1.Deployment)
		settleReplicas(s, d.Status.ObservedGeneration >= d.Generation, int(ptr.Deref(d.Spec.Replicas, 1)), false)
	}},
	{Group: "apps", Kind: "ReplicaSet"}: {func() runtime.Object { return &appsv1.ReplicaSet{} }, func(obj runtime.Object, s *state) {
		r := obj.(*appsv1.ReplicaSet)
		settleReplicas(s, r.Status.ObservedGeneration >= r.Generation, int(ptr.Deref(r.Spec.Replicas, 1)), false)
	}},
	{Kind: "ReplicationController"}: {func() runtime.Object { return &corev1.ReplicationController{} }, func(obj runtime.Object, s *state) {
		r := obj.(*corev1.ReplicationController)
		settleReplicas(s, r.Status.ObservedGeneration >= r.Generation, int(ptr.Deref(r.Spec.Replicas, 1)), false)
	}},
	{Group: "apps", Kind: "StatefulSet"}: {func() runtime.Object { return &appsv1.StatefulSet{} }, func(obj runtime.Object, s *state) {
		st := obj.(*appsv1.StatefulSet)
		wanted := int(ptr.Deref(st.Spec.Replicas, 1))
		// OrderedReady creates no pod after one that is not ready.
		orderedStop := st.Spec.PodManagementPolicy != appsv1.ParallelPodManagement && s.unschedulable > 0 && len(s.Pods) < wanted
		settleReplicas(s, st.Status.ObservedGeneration >= st.Generation, wanted, orderedStop)
	}},
	{Group: "apps", Kind: "DaemonSet"}: {func() runtime.Object { return &appsv1.DaemonSet{} }, func(obj runtime.Object, s *state) {
		d := obj.(*appsv1.DaemonSet)
		settleReplicas(s, d.Status.ObservedGeneration >= d.Generation, int(d.Status.DesiredNumberScheduled), false)
	}},
	{Group: "batch", Kind: "Job"}: {func() runtime.Object { return &batchv1.Job{} }, func(obj runtime.Object, s *state) {
		settleJob(obj.(*batchv1.Job), s)
	}},
	// Karpenter provisions only from a Ready NodePool: pods applied before
	// it is would wait for its next look (10 s). No typed object: the main
	// module does not import Karpenter.
	{Group: "karpenter.sh", Kind: "NodePool"}: {nil, settleReadyCondition},
}

// settle decides whether the target of kind gk, obj as its informer holds
// it (nil when gone: deleted, or replaced by one of another UID), with the
// pods it owns (also those being deleted), is settled.
func settle(gk schema.GroupKind, obj runtime.Object, owned []*corev1.Pod) state {
	var s state
	deleting := 0
	for _, p := range owned {
		if p.DeletionTimestamp != nil {
			deleting++
			continue
		}
		s.Pods = append(s.Pods, p)
		switch {
		case workload.Bound(p):
		case awaitsDecision(p):
			s.pending++
			s.gated++
		case workload.Unschedulable(p):
			s.unschedulable++
		default:
			s.pending++
		}
	}
	slices.SortFunc(s.Pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if obj == nil {
		s.Settled = len(owned) == 0
		s.Wants = fmt.Sprintf("deleted, %d pods left", len(owned))
		return s
	}
	if deleting > 0 {
		s.Wants = fmt.Sprintf("%d pods being deleted", deleting)
		return s
	}
	r, ok := rules[gk]
	if !ok {
		settleOther(obj, &s)
		return s
	}
	if u, isU := obj.(*unstructured.Unstructured); isU && r.object != nil {
		typed := r.object()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			s.Wants = fmt.Sprintf("a %s it can read: %v", gk.Kind, err)
			return s
		}
		obj = typed
	}
	r.settle(obj, &s)
	return s
}

// gatedText is ", N awaiting the OnDemandShare decision", or "".
func (s *state) gatedText() string {
	if s.gated == 0 {
		return ""
	}
	return fmt.Sprintf(", %d awaiting the OnDemandShare decision", s.gated)
}

// settleReplicas: the controller saw the object's last change and made the
// pods it wants (or stopped, orderedStop), each bound or unschedulable.
func settleReplicas(s *state, observed bool, wanted int, orderedStop bool) {
	s.Wants = fmt.Sprintf("%d pods, has %d (%d pending%s)", wanted, len(s.Pods), s.pending, s.gatedText())
	if !observed {
		s.Wants += ", its controller has not seen its last change"
	}
	s.Settled = observed && s.pending == 0 && (len(s.Pods) == wanted || orderedStop)
}

// settleJob: a Job is settled once it finished; or when every pod it runs
// is unschedulable (it will not finish then); or when it runs all the pods
// it may at once, none pending, and some of them unschedulable: it goes on
// only as a running pod ends, which a pod held by
// localcluster.CompleteAfterAnnotation (a license seat, say) does when it
// is due; or when it runs no pod (parallelism 0, suspended: like zero
// replicas) and none is left.
func settleJob(job *batchv1.Job, s *state) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			s.Settled = true
			return
		}
	}
	parallelism := int(ptr.Deref(job.Spec.Parallelism, 1))
	if parallelism == 0 || ptr.Deref(job.Spec.Suspend, false) {
		s.Settled = len(s.Pods) == 0
		s.Wants = "no pods: it runs none"
		return
	}
	s.Wants = "to finish"
	active, unschedulable, succeeded := 0, 0, 0
	for _, p := range s.Pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded++
			continue
		case p.Status.Phase == corev1.PodFailed:
			continue
		}
		active++
		switch {
		case workload.Unschedulable(p):
			unschedulable++
		case !workload.Bound(p):
			return
		}
	}
	may := parallelism
	if job.Spec.Completions != nil {
		may = min(may, int(*job.Spec.Completions)-succeeded)
	}
	s.Settled = active > 0 && (unschedulable == active || unschedulable > 0 && active >= may)
}

// settleOther is the rule of any kind without one of its own (a Service, a
// PriorityClass, a custom resource): its controller, if it reports
// status.observedGeneration, saw its last change, and every pod it owns is
// bound or unschedulable.
func settleOther(obj runtime.Object, s *state) {
	s.Wants = fmt.Sprintf("its %d pods bound or unschedulable (%d pending%s)", len(s.Pods), s.pending, s.gatedText())
	m, err := meta.Accessor(obj)
	if err != nil {
		s.Wants = fmt.Sprintf("an object with metadata: %v", err)
		return
	}
	observed := true
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// A status.observedGeneration of another type is not a generation.
		if g, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); found && err == nil && g < m.GetGeneration() {
			observed = false
			s.Wants += ", its controller has not seen its last change"
		}
	}
	s.Settled = observed && s.pending == 0
}

// settleReadyCondition: the object's controller says Ready=True of its
// last change (the condition's observedGeneration, when it has one).
func settleReadyCondition(obj runtime.Object, s *state) {
	s.Wants = "its Ready condition True"
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if typ, _, _ := unstructured.NestedString(m, "type"); typ != "Ready" {
			continue
		}
		status, _, _ := unstructured.NestedString(m, "status")
		g, found, err := unstructured.NestedInt64(m, "observedGeneration")
		current := !found || err == nil && g >= u.GetGeneration()
		if status == string(corev1.ConditionTrue) && current {
			s.Settled = s.pending == 0
			return
		}
		reason, _, _ := unstructured.NestedString(m, "reason")
		msg, _, _ := unstructured.NestedString(m, "message")
		s.Wants += fmt.Sprintf(" (now %s: %s: %s)", status, reason, msg)
	}
}
