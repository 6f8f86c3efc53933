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
	v1 "k8s.io/api/core/v1"
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
	// NodeConditions also reads Kubernetes' node lifecycle conditions
	// (DrainInProgress, Drained, MaintenanceInProgress, MaintenancePlanned).
	NodeConditions bool
	// PlannedWithoutTime is what MaintenancePlanned=True means on a node that
	// announces no window time: PlannedAvoid or PlannedScore.
	PlannedWithoutTime PlannedWithoutTime
	// Karpenter also reads what Karpenter's NodeClaims plan for their nodes:
	// expiry, drift and disruption.
	Karpenter bool
}

// PlannedWithoutTime is what MaintenancePlanned=True means on a node that
// announces no window time.
type PlannedWithoutTime string

const (
	// PlannedAvoid keeps pods off the node as in an open window of unknown end.
	PlannedAvoid PlannedWithoutTime = "Avoid"
	// PlannedScore does not filter the node but scores it as if its window
	// opened now.
	PlannedScore PlannedWithoutTime = "Score"
)

// OnDemandShareName is the OnDemandShare plugin's name in a profile; its args
// kind is OnDemandShareArgs. The ondemandshare controller reads the same args
// from the same file, so the plugin and the controller apply one set of rules.
const OnDemandShareName = "OnDemandShare"

// WorkloadKind is a kind of controller whose pods an on-demand share counts
// together.
type WorkloadKind string

const (
	// WorkloadDeployment counts a Deployment's pods across all its ReplicaSets.
	WorkloadDeployment WorkloadKind = "Deployment"
	// WorkloadReplicaSet counts the pods of a ReplicaSet no Deployment owns.
	WorkloadReplicaSet WorkloadKind = "ReplicaSet"
	// WorkloadStatefulSet counts a StatefulSet's pods, slotted by ordinal.
	WorkloadStatefulSet WorkloadKind = "StatefulSet"
	// WorkloadJob counts a Job's pods, slotted by completion index when indexed.
	WorkloadJob WorkloadKind = "Job"
)

// CapacityPreset names the node labels that tell on-demand from spot.
type CapacityPreset string

const (
	// CapacityKarpenter reads karpenter.sh/capacity-type (on-demand, spot).
	CapacityKarpenter CapacityPreset = "Karpenter"
	// CapacityEKSManagedNodeGroup reads eks.amazonaws.com/capacityType (ON_DEMAND, SPOT).
	CapacityEKSManagedNodeGroup CapacityPreset = "EKSManagedNodeGroup"
	// CapacityGKE reads cloud.google.com/gke-spot, set on spot nodes only.
	CapacityGKE CapacityPreset = "GKE"
	// CapacityAKS reads kubernetes.azure.com/scalesetpriority, set (and
	// tainted) on spot nodes only.
	CapacityAKS CapacityPreset = "AKS"
	// CapacityCustom takes the requirements of both classes from the args.
	CapacityCustom CapacityPreset = "Custom"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OnDemandShareArgs holds the arguments of the OnDemandShare plugin and of
// the ondemandshare controller.
type OnDemandShareArgs struct {
	metav1.TypeMeta

	// Policies say which workloads keep a minimum of replicas on on-demand
	// nodes, and how many.
	Policies []OnDemandSharePolicy
	// ExcludedNamespaces exempts the pods of these namespaces from every policy.
	ExcludedNamespaces []string
}

// OnDemandSharePolicy selects workloads and the share of their replicas that
// must run on on-demand nodes.
type OnDemandSharePolicy struct {
	// Name identifies the policy in pod labels, events, logs and metrics.
	Name string
	// Namespaces, NamespaceSelector and PodSelector select the pods the
	// policy applies to; every one that is set must match (they are ANDed).
	Namespaces        []string
	NamespaceSelector *metav1.LabelSelector
	PodSelector       *metav1.LabelSelector
	// WorkloadKinds are the owners whose pods the policy counts.
	WorkloadKinds []WorkloadKind
	// MinOnDemandCount and MinOnDemandPercent give the minimum on on-demand
	// nodes: the larger of the count and the percentage of the replicas,
	// rounded up, and never more than the replicas.
	MinOnDemandCount   int32
	MinOnDemandPercent int32
	// Capacity says which nodes are on-demand and which are spot.
	Capacity CapacityClasses
	// SpotWaitTimeout is how long a spot pod may stay unschedulable before it
	// is recreated on-demand. Zero waits forever.
	SpotWaitTimeout metav1.Duration
	// Recovery moves pods that fell back to on-demand back to spot.
	Recovery SpotRecovery
}

// CapacityClasses tells on-demand nodes from spot nodes.
type CapacityClasses struct {
	// Preset names the platform whose labels are read; Custom reads OnDemand
	// and Spot.
	Preset CapacityPreset
	// OnDemand and Spot are what a pod of each class requires of its node.
	OnDemand []v1.NodeSelectorRequirement
	Spot     []v1.NodeSelectorRequirement
	// SpotTolerations are added to spot pods, next to the preset's own.
	SpotTolerations []v1.Toleration
}

// SpotRecovery bounds the evictions that move fallen-back pods back to spot.
type SpotRecovery struct {
	// Interval is how often recovery runs. Zero turns it off.
	Interval metav1.Duration
	// MaxPodsPerInterval is how many pods one workload may have evicted per
	// interval.
	MaxPodsPerInterval int32
}
