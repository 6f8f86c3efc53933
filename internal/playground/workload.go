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
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Ref is a scenario object that has pods (a Pod or a workload), as created.
type Ref struct {
	Kind      string
	Namespace string
	Name      string
	UID       types.UID
}

func (r Ref) String() string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// object is how the result names the object a pod belongs to.
func (r Ref) object() string { return r.Kind + "/" + r.Name }

// workloadState is what an object has of pods, and whether it is settled:
// its controller made every pod it wants (or, for a Job, finished) and each
// is bound or unschedulable; an object that is gone is settled once its
// pods are.
type workloadState struct {
	// Pods are the pods it owns that are not being deleted, by name.
	Pods    []*corev1.Pod
	Settled bool
	// Wants says why it is not settled, for the timeout error.
	Wants string
}

// observation is one look at the cluster: the scenario's objects (nil when
// gone) and the pods of their namespaces by controller UID.
type observation struct {
	objects map[Ref]metav1.Object
	// owned are the pods of each controller UID, also those being deleted.
	owned map[types.UID][]*corev1.Pod
	// replicaSets are the ReplicaSet UIDs of each Deployment UID.
	replicaSets map[types.UID]sets.Set[types.UID]
}

// observe reads the objects of refs and the pods (and ReplicaSets, for
// Deployments) of their namespaces. seen, when not nil, keeps the
// ReplicaSets of every Deployment across calls: once a deleted Deployment's
// ReplicaSets are gone, their pods are still its own until the garbage
// collector deletes them.
func observe(ctx context.Context, client kubernetes.Interface, refs []Ref, seen map[types.UID]sets.Set[types.UID]) (*observation, error) {
	o := &observation{
		objects:     make(map[Ref]metav1.Object, len(refs)),
		owned:       map[types.UID][]*corev1.Pod{},
		replicaSets: map[types.UID]sets.Set[types.UID]{},
	}
	namespaces, rsNamespaces := sets.New[string](), sets.New[string]()
	for _, r := range refs {
		namespaces.Insert(r.Namespace)
		if r.Kind == "Deployment" {
			rsNamespaces.Insert(r.Namespace)
		}
	}
	for _, ns := range sets.List(namespaces) {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			uid := p.UID
			if c := metav1.GetControllerOf(p); c != nil {
				uid = c.UID
			}
			o.owned[uid] = append(o.owned[uid], p)
		}
	}
	for _, ns := range sets.List(rsNamespaces) {
		list, err := client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the ReplicaSets of %s: %w", ns, err)
		}
		for i := range list.Items {
			if c := metav1.GetControllerOf(&list.Items[i]); c != nil {
				if o.replicaSets[c.UID] == nil {
					o.replicaSets[c.UID] = sets.New[types.UID]()
				}
				o.replicaSets[c.UID].Insert(list.Items[i].UID)
			}
		}
	}
	for uid, s := range seen {
		if o.replicaSets[uid] == nil {
			o.replicaSets[uid] = sets.New[types.UID]()
		}
		o.replicaSets[uid] = o.replicaSets[uid].Union(s)
	}
	for uid, s := range o.replicaSets {
		if seen != nil {
			seen[uid] = s
		}
	}
	for _, r := range refs {
		obj, err := getObject(ctx, client, r)
		if apierrors.IsNotFound(err) || (err == nil && obj.GetUID() != r.UID) {
			o.objects[r] = nil
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", r, err)
		}
		o.objects[r] = obj
	}
	return o, nil
}

func getObject(ctx context.Context, client kubernetes.Interface, r Ref) (metav1.Object, error) {
	opts := metav1.GetOptions{}
	switch r.Kind {
	case "Pod":
		return client.CoreV1().Pods(r.Namespace).Get(ctx, r.Name, opts)
	case "ReplicaSet":
		return client.AppsV1().ReplicaSets(r.Namespace).Get(ctx, r.Name, opts)
	case "Deployment":
		return client.AppsV1().Deployments(r.Namespace).Get(ctx, r.Name, opts)
	case "StatefulSet":
		return client.AppsV1().StatefulSets(r.Namespace).Get(ctx, r.Name, opts)
	case "DaemonSet":
		return client.AppsV1().DaemonSets(r.Namespace).Get(ctx, r.Name, opts)
	case "Job":
		return client.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, opts)
	}
	return nil, fmt.Errorf("%s: not a kind with pods", r)
}

// state is what o shows of r.
func (o *observation) state(r Ref) workloadState {
	var owned []*corev1.Pod
	if r.Kind == "Pod" {
		for _, p := range o.owned[r.UID] {
			if p.UID == r.UID {
				owned = append(owned, p)
			}
		}
	} else {
		owned = o.owned[r.UID]
		if r.Kind == "Deployment" {
			owned = nil
			for _, rs := range sets.List(o.replicaSets[r.UID]) {
				owned = append(owned, o.owned[rs]...)
			}
		}
	}
	return settle(r.Kind, o.objects[r], owned)
}

// settle decides whether an object of kind (nil when gone) with the pods
// it owns is settled.
func settle(kind string, obj metav1.Object, owned []*corev1.Pod) workloadState {
	var s workloadState
	deleting := 0
	for _, p := range owned {
		if p.DeletionTimestamp != nil {
			deleting++
			continue
		}
		s.Pods = append(s.Pods, p)
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
	pending, unschedulable := 0, 0
	for _, p := range s.Pods {
		switch {
		case Bound(p):
		case Unschedulable(p):
			unschedulable++
		default:
			pending++
		}
	}
	if kind == "Pod" {
		s.Settled = len(s.Pods) == 1 && pending == 0
		s.Wants = "bound or unschedulable"
		return s
	}
	if job, ok := obj.(*batchv1.Job); ok {
		return settleJob(job, s)
	}
	observed, wanted, orderedStop := false, 0, false
	switch w := obj.(type) {
	case *appsv1.Deployment:
		observed, wanted = w.Status.ObservedGeneration >= w.Generation, int(ptr.Deref(w.Spec.Replicas, 1))
	case *appsv1.ReplicaSet:
		observed, wanted = w.Status.ObservedGeneration >= w.Generation, int(ptr.Deref(w.Spec.Replicas, 1))
	case *appsv1.StatefulSet:
		observed, wanted = w.Status.ObservedGeneration >= w.Generation, int(ptr.Deref(w.Spec.Replicas, 1))
		// OrderedReady creates no pod after one that is not ready.
		orderedStop = w.Spec.PodManagementPolicy != appsv1.ParallelPodManagement && unschedulable > 0 && len(s.Pods) < wanted
	case *appsv1.DaemonSet:
		observed, wanted = w.Status.ObservedGeneration >= w.Generation, int(w.Status.DesiredNumberScheduled)
	}
	s.Wants = fmt.Sprintf("%d pods, has %d (%d pending)", wanted, len(s.Pods), pending)
	if !observed {
		s.Wants += ", its controller has not seen its last change"
	}
	s.Settled = observed && pending == 0 && (len(s.Pods) == wanted || orderedStop)
	return s
}

// settleJob: a Job is settled once it finished, or when every pod it runs
// is unschedulable (it will not finish then), or when it runs no pod
// (parallelism 0, suspended: like zero replicas) and none is left.
func settleJob(job *batchv1.Job, s workloadState) workloadState {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			s.Settled = true
			return s
		}
	}
	if ptr.Deref(job.Spec.Parallelism, 1) == 0 || ptr.Deref(job.Spec.Suspend, false) {
		s.Settled = len(s.Pods) == 0
		s.Wants = "no pods: it runs none"
		return s
	}
	active := 0
	for _, p := range s.Pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		active++
		if !Unschedulable(p) {
			s.Wants = "to finish"
			return s
		}
	}
	s.Settled = active > 0
	s.Wants = "to finish"
	return s
}
