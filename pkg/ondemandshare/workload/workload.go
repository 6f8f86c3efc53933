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

// Package workload finds the workload a pod belongs to, the unit whose
// replicas an on-demand share counts together: a Deployment across its
// ReplicaSets, a bare ReplicaSet, a StatefulSet or a Job.
package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// Key names a workload. UID tells a workload from an earlier one of the
// same name, whose pods may still be terminating.
type Key struct {
	Kind      config.WorkloadKind
	Namespace string
	Name      string
	UID       types.UID
}

// Of returns the workload of pod from its controller ownerRef; false for a
// pod without a controller or with one of another kind (a DaemonSet, a
// custom resource).
//
// A ReplicaSet pod belongs to the ReplicaSet's controlling Deployment, as in
// the disruption controller's getPodDeployment (k8s.io/kubernetes
// pkg/controller/disruption/disruption.go): replicaSets must return the
// ReplicaSet with the UID the pod's ownerRef names, and its controller must
// be an apps Deployment. The Deployment's UID is the one the ReplicaSet's
// ownerRef names; the Deployment itself is not read.
//
// When the walk cannot go on, the pod is its ReplicaSet's, as a bare
// ReplicaSet's pod is: the ReplicaSet is not found (not in an informer's
// cache yet, or deleted while its pods terminate), has another UID (a new
// ReplicaSet of the same name), or has no Deployment for controller. A
// caller that must not count such a pod on its own waits for its cache, or
// lists ReplicaSet among the kinds it counts. A nil replicaSets never walks.
func Of(pod *v1.Pod, replicaSets func(namespace, name string) (*appsv1.ReplicaSet, error)) (Key, bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return Key{}, false
	}
	kinds := mayBe[groupKind(ref)]
	if kinds == nil {
		return Key{}, false
	}
	kind := kinds[0]
	k := Key{Kind: kind, Namespace: pod.Namespace, Name: ref.Name, UID: ref.UID}
	if kind != config.WorkloadReplicaSet || replicaSets == nil {
		return k, true
	}
	rs, err := replicaSets(pod.Namespace, ref.Name)
	if err != nil || rs == nil || rs.UID != ref.UID {
		return k, true
	}
	if d := DeploymentOf(rs); d != nil {
		return Key{Kind: config.WorkloadDeployment, Namespace: pod.Namespace, Name: d.Name, UID: d.UID}, true
	}
	return k, true
}

// DeploymentOf returns rs's controller ownerRef when it is an apps
// Deployment, nil otherwise.
func DeploymentOf(rs *appsv1.ReplicaSet) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil || groupKind(ref) != (schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
		return nil
	}
	return ref
}

// MayBe lists the kinds Of can return for pod without reading a lister: a
// ReplicaSet pod may be a Deployment's. It is nil where Of returns false.
// The slice is shared and must not be changed: the scheduler asks for every
// pod, and this way asking allocates nothing.
func MayBe(pod *v1.Pod) []config.WorkloadKind {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return nil
	}
	return mayBe[groupKind(ref)]
}

// mayBe holds MayBe's answers, by the group and kind of a pod's controller;
// the first kind is the controller's own. A kind of another group (a custom
// Job) is not ours.
var mayBe = map[schema.GroupKind][]config.WorkloadKind{
	{Group: "apps", Kind: "ReplicaSet"}:  {config.WorkloadReplicaSet, config.WorkloadDeployment},
	{Group: "apps", Kind: "StatefulSet"}: {config.WorkloadStatefulSet},
	{Group: "batch", Kind: "Job"}:        {config.WorkloadJob},
}

func groupKind(ref *metav1.OwnerReference) schema.GroupKind {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{}
	}
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
}

// Live reports whether pod counts as a replica: not finished and not being
// deleted, as the ReplicaSet controller's IsPodActive sees it (a
// terminating pod is being replaced).
func Live(pod *v1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
}

// ControllerIndex names an informer index of pods (or ReplicaSets) by the
// UID of their controller; IndexByController is its function.
const ControllerIndex = "ondemandshare/controller-uid"

// IndexByController indexes obj by its controller ownerRef's UID. It reads
// the object alone, so the index never depends on another informer.
func IndexByController(obj any) ([]string, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return []string{string(ref.UID)}, nil
		}
	}
	return nil, nil
}
