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

package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeLessPodsName is the NodeLessPods plugin's name in a profile; its args
// kind is NodeLessPodsArgs.
const NodeLessPodsName = "NodeLessPods"

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
type NodeLessPodsArgs struct {
	metav1.TypeMeta

	// Mode selects whether fewer (LeastPods) or more (MostPods) counted pods score higher.
	Mode NodeLessPodsMode
	// PodSelector restricts counting to the pods whose labels match. Nil counts every pod.
	PodSelector *metav1.LabelSelector
	// Namespaces restricts counting to pods in these namespaces. Empty counts every namespace.
	Namespaces []string
	// IgnoreDaemonSetPods leaves pods owned by a DaemonSet out of the count.
	IgnoreDaemonSetPods bool
	// RelativeToCapacity compares nodes by counted pods divided by the node's
	// allocatable pod count instead of by the raw count.
	RelativeToCapacity bool
}
