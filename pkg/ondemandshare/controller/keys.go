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
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/workload"
)

// Key names one workload of one policy: the unit the workqueue hands to a
// single worker at a time, so that one workload's slots are never decided
// by two workers at once.
type Key struct {
	Policy, Namespace string
	// Kind is a config.WorkloadKind, "Pod" for a pod without a controller,
	// or Kind.group for any other controller.
	Kind, Name string
}

func (k Key) String() string {
	return k.Policy + "/" + k.Namespace + "/" + k.Kind + "/" + k.Name
}

// kindPod is the Kind of a pod that has no controller: its own workload.
const kindPod = "Pod"

// ownerIndex indexes pods by their controller, kind/namespace/name.
const ownerIndex = "ondemandshare/owner"

var knownKinds = map[schema.GroupKind]config.WorkloadKind{
	{Group: "apps", Kind: "ReplicaSet"}:  config.WorkloadReplicaSet,
	{Group: "apps", Kind: "StatefulSet"}: config.WorkloadStatefulSet,
	{Group: "batch", Kind: "Job"}:        config.WorkloadJob,
	{Group: "apps", Kind: "Deployment"}:  config.WorkloadDeployment,
}

// kindOf names ref's kind; a kind of another group than ours stays apart
// (a custom Job is not a batch Job).
func kindOf(ref *metav1.OwnerReference) string {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ref.Kind + "." + ref.APIVersion
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	if k, ok := knownKinds[gk]; ok {
		return string(k)
	}
	return gk.String()
}

func ownerKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// indexByOwner is the ownerIndex's function.
func indexByOwner(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Labels[share.PolicyLabel] == "" {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		return []string{ownerKey(kindOf(ref), pod.Namespace, ref.Name)}, nil
	}
	return []string{ownerKey(kindPod, pod.Namespace, pod.Name)}, nil
}

// keyOf is the workload of pod; false for a pod no policy selected. A
// ReplicaSet pod belongs to the ReplicaSet's Deployment when the cached
// ReplicaSet is the pod's (same UID) and a Deployment controls it; while the
// ReplicaSet is not cached yet, the key is the ReplicaSet's, and its sync
// waits (the ReplicaSet's add event enqueues the pods again).
func (c *Controller) keyOf(pod *v1.Pod) (Key, bool) {
	name := pod.Labels[share.PolicyLabel]
	if name == "" {
		return Key{}, false
	}
	k := Key{Policy: name, Namespace: pod.Namespace, Kind: kindPod, Name: pod.Name}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return k, true
	}
	k.Kind, k.Name = kindOf(ref), ref.Name
	if k.Kind == string(config.WorkloadReplicaSet) {
		if rs, err := c.rsLister.ReplicaSets(pod.Namespace).Get(ref.Name); err == nil && rs.UID == ref.UID {
			if d := workload.DeploymentOf(rs); d != nil {
				k.Kind, k.Name = string(config.WorkloadDeployment), d.Name
			}
		}
	}
	return k, true
}

// member is a pod of a workload and its slot space: the controller's UID
// (each ReplicaSet of a Deployment numbers its slots from 1).
type member struct {
	pod   *v1.Pod
	space types.UID
}

// errWaitReplicaSet asks for a retry: a pod's ReplicaSet is not cached yet.
var errWaitReplicaSet = errors.New("ReplicaSet not in the informer's cache yet")

// membersOf lists key's pods from the caches. For a ReplicaSet that turns out
// to belong to a Deployment it returns the Deployment's key instead.
func (c *Controller) membersOf(key Key) ([]member, *Key, error) {
	switch key.Kind {
	case string(config.WorkloadDeployment):
		rss, err := c.rsLister.ReplicaSets(key.Namespace).List(labels.Everything())
		if err != nil {
			return nil, nil, err
		}
		var out []member
		for _, rs := range rss {
			if d := workload.DeploymentOf(rs); d != nil && d.Name == key.Name {
				out = c.appendPods(out, key, string(config.WorkloadReplicaSet), rs.Name, rs.UID)
			}
		}
		return out, nil, nil
	case string(config.WorkloadReplicaSet):
		rs, err := c.rsLister.ReplicaSets(key.Namespace).Get(key.Name)
		if apierrors.IsNotFound(err) {
			if len(c.appendPods(nil, key, key.Kind, key.Name, "")) == 0 {
				return nil, nil, nil // gone with its pods
			}
			return nil, nil, errWaitReplicaSet
		}
		if err != nil {
			return nil, nil, err
		}
		if d := workload.DeploymentOf(rs); d != nil {
			return nil, &Key{Policy: key.Policy, Namespace: key.Namespace, Kind: string(config.WorkloadDeployment), Name: d.Name}, nil
		}
		return c.appendPods(nil, key, key.Kind, key.Name, rs.UID), nil, nil
	}
	return c.appendPods(nil, key, key.Kind, key.Name, ""), nil, nil
}

// appendPods appends the pods of key's policy whose controller is
// kind/name, and with uid, when given, that controller's UID.
func (c *Controller) appendPods(out []member, key Key, kind, name string, uid types.UID) []member {
	objs, err := c.pods.GetIndexer().ByIndex(ownerIndex, ownerKey(kind, key.Namespace, name))
	if err != nil {
		return out // only an unknown index fails
	}
	for _, obj := range objs {
		pod := obj.(*v1.Pod)
		if pod.Labels[share.PolicyLabel] != key.Policy {
			continue
		}
		space := pod.UID
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			if uid != "" && ref.UID != uid {
				continue // a former owner's pod of the same name
			}
			space = ref.UID
		}
		out = append(out, member{pod: pod, space: space})
	}
	return out
}

// isActive mirrors the ReplicaSet controller's view (IsPodActive): a
// terminating or finished pod is being replaced, so its slot is free.
func isActive(pod *v1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
}

func hasGate(pod *v1.Pod) bool {
	for _, g := range pod.Spec.SchedulingGates {
		if g.Name == share.SchedulingGate {
			return true
		}
	}
	return false
}

// kindList is for messages.
func kindList(kinds []config.WorkloadKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
