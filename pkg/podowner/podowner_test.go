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

package podowner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestIsDaemonSetPod(t *testing.T) {
	ref := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "x", Controller: ptr.To(controller)}
	}
	tests := []struct {
		name   string
		owners []metav1.OwnerReference
		want   bool
	}{
		{name: "no owner", want: false},
		{name: "DaemonSet controller", owners: []metav1.OwnerReference{ref("apps/v1", "DaemonSet", true)}, want: true},
		{name: "DaemonSet owner that is not the controller", owners: []metav1.OwnerReference{ref("apps/v1", "DaemonSet", false)}, want: false},
		{name: "ReplicaSet controller", owners: []metav1.OwnerReference{ref("apps/v1", "ReplicaSet", true)}, want: false},
		{name: "a DaemonSet kind of another group", owners: []metav1.OwnerReference{ref("example.com/v1", "DaemonSet", true)}, want: false},
		// Only apps/v1 counts, as in kubectl drain (isControllerRefDaemonSet):
		// the in-tree DaemonSet controller writes apps/v1 controller
		// references, and the beta versions below have not been served since
		// v1.16. Treating such a ref as a DaemonSet would exempt the pod from
		// every PlacementPolicy rule; counting it costs one pod in a score.
		{name: "DaemonSet controller of apps/v1beta2", owners: []metav1.OwnerReference{ref("apps/v1beta2", "DaemonSet", true)}, want: false},
		{name: "DaemonSet controller of extensions/v1beta1", owners: []metav1.OwnerReference{ref("extensions/v1beta1", "DaemonSet", true)}, want: false},
		{name: "apiVersion without its version", owners: []metav1.OwnerReference{ref("apps", "DaemonSet", true)}, want: false},
		{name: "DaemonSet of a look-alike group", owners: []metav1.OwnerReference{ref("apps.kruise.io/v1alpha1", "DaemonSet", true)}, want: false},
		// Kind and apiVersion compare exactly, as the API server stores them.
		{name: "kind in lower case", owners: []metav1.OwnerReference{ref("apps/v1", "daemonset", true)}, want: false},
		{name: "apiVersion in upper case", owners: []metav1.OwnerReference{ref("Apps/V1", "DaemonSet", true)}, want: false},
		// The controller decides, wherever it stands among the owners.
		{name: "DaemonSet controller after a non-controller owner", owners: []metav1.OwnerReference{ref("v1", "ConfigMap", false), ref("apps/v1", "DaemonSet", true)}, want: true},
		{name: "DaemonSet owner beside a ReplicaSet controller", owners: []metav1.OwnerReference{ref("apps/v1", "DaemonSet", false), ref("apps/v1", "ReplicaSet", true)}, want: false},
		{name: "controller unset", owners: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "x"}}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tc.owners}}
			if got := IsDaemonSetPod(pod); got != tc.want {
				t.Errorf("IsDaemonSetPod = %v, want %v", got, tc.want)
			}
		})
	}
}
