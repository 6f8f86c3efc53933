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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeLessPodsMode tells NodeLessPods which end of the pod-count range wins.
type NodeLessPodsMode string

const (
	// NodeLessPodsLeastPods prefers the nodes that hold the fewest counted pods (spread).
	NodeLessPodsLeastPods NodeLessPodsMode = "LeastPods"
	// NodeLessPodsMostPods prefers the nodes that hold the most counted pods (consolidation).
	NodeLessPodsMostPods NodeLessPodsMode = "MostPods"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NodeLessPodsArgs holds the arguments of the NodeLessPods plugin.
// Every field is optional.
type NodeLessPodsArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Mode is LeastPods (default: fewer counted pods score higher) or
	// MostPods (more counted pods score higher, to consolidate).
	// +optional
	Mode NodeLessPodsMode `json:"mode,omitempty"`
	// PodSelector counts only the pods whose labels match. Unset counts every pod.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
	// Namespaces counts only the pods in these namespaces. Empty counts every namespace.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// IgnoreDaemonSetPods leaves pods owned by a DaemonSet out of the count.
	// Defaults to true: every node runs them, so they do not tell nodes apart.
	// +optional
	IgnoreDaemonSetPods *bool `json:"ignoreDaemonSetPods,omitempty"`
	// RelativeToCapacity compares nodes by counted pods divided by the node's
	// allocatable pod count instead of by the raw count. Defaults to false.
	// +optional
	RelativeToCapacity *bool `json:"relativeToCapacity,omitempty"`
}
