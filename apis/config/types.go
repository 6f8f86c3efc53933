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

// PlacementPolicyName is the PlacementPolicy plugin's name in a profile; its
// args kind is PlacementPolicyArgs.
const PlacementPolicyName = "PlacementPolicy"

// PlacementAction says what a placement rule does with the nodes it selects.
type PlacementAction string

const (
	// PlacementRequire keeps the selected pods off every node the rule's
	// nodeSelector does not match (Filter).
	PlacementRequire PlacementAction = "Require"
	// PlacementPrefer adds the rule's weight to the score of the nodes its
	// nodeSelector matches (Score).
	PlacementPrefer PlacementAction = "Prefer"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PlacementPolicyArgs holds the arguments of the PlacementPolicy plugin.
type PlacementPolicyArgs struct {
	metav1.TypeMeta

	// Rules are the placement rules, each naming the pods it applies to and
	// the nodes those pods require or prefer.
	Rules []PlacementRule
	// IgnoreDaemonSetPods exempts pods owned by a DaemonSet from every rule.
	IgnoreDaemonSetPods bool
	// ExcludedNamespaces exempts the pods of these namespaces from every rule.
	ExcludedNamespaces []string
}

// PlacementRule selects pods and the nodes they require or prefer.
type PlacementRule struct {
	// Name identifies the rule in rejections, events and logs.
	Name string
	// Namespaces, NamespaceSelector and PodSelector select the pods the rule
	// applies to; every one that is set must match (they are ANDed).
	Namespaces        []string
	NamespaceSelector *metav1.LabelSelector
	PodSelector       *metav1.LabelSelector
	// NodeSelector selects the nodes, by their labels.
	NodeSelector *metav1.LabelSelector
	// Action is Require or Prefer.
	Action PlacementAction
	// Weight is what a Prefer rule adds to the raw score of a node it matches.
	Weight int32
}

// MaintenanceWindowName is the MaintenanceWindow plugin's name in a profile;
// its args kind is MaintenanceWindowArgs.
const MaintenanceWindowName = "MaintenanceWindow"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MaintenanceWindowArgs holds the arguments of the MaintenanceWindow plugin.
type MaintenanceWindowArgs struct {
	metav1.TypeMeta

	// AnnotationKey is the node annotation that announces maintenance
	// windows: RFC 3339 intervals START/END, comma-separated.
	AnnotationKey string
	// AvoidWithin rejects a node whose next window opens within this
	// duration, as well as one whose window is open.
	AvoidWithin metav1.Duration
	// Horizon is how far ahead a window lowers a node's score.
	Horizon metav1.Duration
	// IgnoreDaemonSetPods exempts pods owned by a DaemonSet.
	IgnoreDaemonSetPods bool
	// ExemptPodSelector exempts the pods whose labels match. Nil exempts none.
	ExemptPodSelector *metav1.LabelSelector
	// RuntimeAware lets a pod of known expected runtime use a node whose
	// window has not opened yet when it ends RuntimeMargin before it.
	RuntimeAware bool
	// RuntimeMargin is the time a pod of known runtime must end before a
	// window opens.
	RuntimeMargin metav1.Duration
	// ProviderSignals also reads the cloud providers' maintenance signals on
	// nodes (GKE's scheduled-maintenance-time label).
	ProviderSignals bool
	// ProviderWindowDuration is the length assumed for a provider's window
	// of which only the start is published.
	ProviderWindowDuration metav1.Duration
}
