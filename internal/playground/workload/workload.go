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

// Package workload holds the words the playground's steps share about the
// objects a scenario applies and the pods they own: scenario names them,
// apply creates them, settle waits for them and report describes them.
// The steps import it rather than each other; it imports no step, no
// client and no cluster.
package workload

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultNamespace is where a namespaced object without a namespace goes.
const DefaultNamespace = metav1.NamespaceDefault

// BoundPodAnnotation is set ("true") on the pods a scenario's bound pods
// are created as: the embedded cluster's KWOK (see its kwok.yaml) leaves
// such a pod as created, Pending, so that replaying a snapshot costs no
// status patch per pod. The scheduler counts a bound pod whatever its
// phase, until it has terminated.
const BoundPodAnnotation = "playground.adminsched.io/bound-pod"

// ObjectRef names an object, as a scenario's step writes it.
type ObjectRef struct {
	// APIVersion may be left out of a scenario: its plan takes the
	// object's.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// Namespace defaults to DefaultNamespace; it is ignored for an object
	// that has none (a cluster-scoped one).
	Namespace string `json:"namespace,omitempty"`
}

// Target is an object applied to the cluster, as created: what a run
// waits for and reports on.
type Target struct {
	APIVersion, Kind, Namespace, Name string
	// Resource is where the object is served: its informer watches it.
	Resource schema.GroupVersionResource
	// UID is the object as created: one of the same name with another UID
	// is a new object, and this one is gone.
	UID types.UID
}

func (t Target) String() string {
	if t.Namespace == "" {
		return t.Kind + " " + t.Name
	}
	return t.Kind + " " + t.Namespace + "/" + t.Name
}

// Object is how a result names the target: Kind/name.
func (t Target) Object() string { return t.Kind + "/" + t.Name }

// OwnedPod is a pod and the target that owns it through a controller
// owner reference.
type OwnedPod struct {
	Pod *corev1.Pod
	// Object is the target that owns the pod: Kind/name.
	Object string
}

// Bound reports whether pod has a node.
func Bound(pod *corev1.Pod) bool { return pod.Spec.NodeName != "" }

// Unschedulable reports whether the scheduler found no node for pod: its
// PodScheduled condition is False with reason Unschedulable.
func Unschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}
