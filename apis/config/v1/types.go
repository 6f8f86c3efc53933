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
	corev1 "k8s.io/api/core/v1"
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
	metav1.TypeMeta `json:",inline"`

	// Rules are the placement rules. A pod that matches several Require rules
	// must run on a node that matches all of them; the weights of the Prefer
	// rules it matches add up on the nodes each one selects.
	// +optional
	// +listType=map
	// +listMapKey=name
	Rules []PlacementRule `json:"rules,omitempty"`
	// IgnoreDaemonSetPods exempts pods owned by a DaemonSet from every rule.
	// Defaults to true: a DaemonSet's pods must run on the nodes it targets.
	// +optional
	IgnoreDaemonSetPods *bool `json:"ignoreDaemonSetPods,omitempty"`
	// ExcludedNamespaces exempts the pods of these namespaces from every rule,
	// for example kube-system. Empty exempts none.
	// +optional
	// +listType=set
	ExcludedNamespaces []string `json:"excludedNamespaces,omitempty"`
}

// PlacementRule selects pods and the nodes they require or prefer.
type PlacementRule struct {
	// Name identifies the rule in rejections, events and logs: a DNS-1123
	// label, unique among the rules.
	Name string `json:"name"`
	// Namespaces applies the rule to pods in these namespaces.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector applies the rule to pods whose namespace's labels match.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// PodSelector applies the rule to pods whose labels match.
	// At least one of namespaces, namespaceSelector and podSelector must be
	// set; every one that is set must match.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
	// NodeSelector selects the nodes the rule requires or prefers, by labels.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	// Action is Require (pods run only on matching nodes) or Prefer
	// (matching nodes score higher).
	Action PlacementAction `json:"action"`
	// Weight, from 1 to 100, is what a Prefer rule adds to the raw score of
	// a node it matches. Defaults to 1 for Prefer rules; Require rules take
	// none.
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MaintenanceWindowArgs holds the arguments of the MaintenanceWindow plugin.
type MaintenanceWindowArgs struct {
	metav1.TypeMeta `json:",inline"`

	// AnnotationKey is the node annotation that announces maintenance
	// windows. Its value is one or more RFC 3339 intervals START/END,
	// comma-separated, for example
	// "2026-12-01T02:00:00Z/2026-12-01T04:00:00Z".
	// Defaults to scheduling.adminsched.io/maintenance-window.
	// +optional
	AnnotationKey *string `json:"annotationKey,omitempty"`
	// AvoidWithin rejects a node whose next window opens within this
	// duration, as well as one whose window is open. Defaults to 0s: only
	// open windows reject.
	// +optional
	AvoidWithin *metav1.Duration `json:"avoidWithin,omitempty"`
	// Horizon is how far ahead a window lowers a node's score: the sooner
	// it opens, the lower. Defaults to 24h.
	// +optional
	Horizon *metav1.Duration `json:"horizon,omitempty"`
	// IgnoreDaemonSetPods exempts pods owned by a DaemonSet: they run on
	// every node, maintenance or not. Defaults to true.
	// +optional
	IgnoreDaemonSetPods *bool `json:"ignoreDaemonSetPods,omitempty"`
	// ExemptPodSelector exempts the pods whose labels match, for example
	// the agents that carry out the maintenance. Unset exempts none.
	// +optional
	ExemptPodSelector *metav1.LabelSelector `json:"exemptPodSelector,omitempty"`
	// RuntimeAware lets a pod whose expected runtime is known (its
	// activeDeadlineSeconds, or the maintenancewindow.adminsched.io/expected-runtime
	// annotation) use a node whose window has not opened yet, when the pod
	// ends at least RuntimeMargin before the window opens; Score then
	// prefers for it the nodes whose window comes soonest after its end.
	// An open window still rejects every pod. Defaults to true.
	// +optional
	RuntimeAware *bool `json:"runtimeAware,omitempty"`
	// RuntimeMargin is how long before a window opens a pod of known
	// runtime must end: it covers the time from binding to the kubelet's
	// start of the pod, the pod's termination grace period, and clock skew.
	// Defaults to 10m.
	// +optional
	RuntimeMargin *metav1.Duration `json:"runtimeMargin,omitempty"`
	// ProviderSignals also reads the maintenance that cloud providers
	// publish on nodes, next to AnnotationKey: GKE's
	// cloud.google.com/scheduled-maintenance-time label. Defaults to true.
	// +optional
	ProviderSignals *bool `json:"providerSignals,omitempty"`
	// ProviderWindowDuration is the length assumed for a provider's window,
	// of which only the start is published. Defaults to 1h.
	// +optional
	ProviderWindowDuration *metav1.Duration `json:"providerWindowDuration,omitempty"`
	// NodeConditions also reads Kubernetes' node lifecycle conditions:
	// DrainInProgress, Drained and MaintenanceInProgress = True keep new pods
	// off the node as an open window of unknown end; MaintenancePlanned = True
	// on a node that announces no window time is read per
	// PlannedWithoutTime. Defaults to true.
	// +optional
	NodeConditions *bool `json:"nodeConditions,omitempty"`
	// PlannedWithoutTime is what MaintenancePlanned=True means on a node that
	// announces no window (in AnnotationKey or a provider's label) that has
	// not ended: "Avoid" keeps pods off it as in an open window of unknown
	// end; "Score" does not filter it but scores it as if its window opened
	// now. A node that announces a window is judged by that window alone.
	// Defaults to "Avoid".
	// +optional
	PlannedWithoutTime PlannedWithoutTime `json:"plannedWithoutTime,omitempty"`
	// Karpenter also reads what Karpenter's NodeClaims plan for the nodes
	// they launched: the expiry opens a window of unknown end, and a drifted
	// or disrupting node is kept free of new pods. Defaults to true.
	// +optional
	Karpenter *bool `json:"karpenter,omitempty"`
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
	// CapacityKarpenter reads karpenter.sh/capacity-type: on-demand, spot.
	CapacityKarpenter CapacityPreset = "Karpenter"
	// CapacityEKSManagedNodeGroup reads eks.amazonaws.com/capacityType:
	// ON_DEMAND, SPOT.
	CapacityEKSManagedNodeGroup CapacityPreset = "EKSManagedNodeGroup"
	// CapacityGKE reads cloud.google.com/gke-spot=true, set on spot nodes only.
	CapacityGKE CapacityPreset = "GKE"
	// CapacityAKS reads kubernetes.azure.com/scalesetpriority=spot, set on
	// spot nodes only, which AKS also taints.
	CapacityAKS CapacityPreset = "AKS"
	// CapacityCustom takes the requirements of both classes from onDemand
	// and spot.
	CapacityCustom CapacityPreset = "Custom"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OnDemandShareArgs holds the arguments of the OnDemandShare plugin and of
// the ondemandshare controller, which read them from the same
// KubeSchedulerConfiguration.
type OnDemandShareArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Policies say which workloads keep a minimum of replicas on on-demand
	// nodes. A pod that two policies select follows the first, by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Policies []OnDemandSharePolicy `json:"policies,omitempty"`
	// ExcludedNamespaces exempts the pods of these namespaces from every
	// policy, for example kube-system. Empty exempts none.
	// +optional
	// +listType=set
	ExcludedNamespaces []string `json:"excludedNamespaces,omitempty"`
}

// OnDemandSharePolicy selects workloads and the share of their replicas that
// must run on on-demand nodes.
type OnDemandSharePolicy struct {
	// Name identifies the policy in pod labels, events, logs and metrics: a
	// DNS-1123 label, unique among the policies.
	Name string `json:"name"`
	// Namespaces applies the policy to pods in these namespaces.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector applies the policy to pods whose namespace's labels
	// match.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// PodSelector applies the policy to pods whose labels (the workload's pod
	// template labels) match. At least one of namespaces, namespaceSelector
	// and podSelector must be set; every one that is set must match.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
	// WorkloadKinds are the owners whose pods the policy counts: Deployment
	// (across its ReplicaSets), ReplicaSet (one no Deployment owns),
	// StatefulSet and Job. Defaults to Deployment, StatefulSet and Job.
	// Pods of other owners, or of none, are left alone.
	// +optional
	// +listType=set
	WorkloadKinds []WorkloadKind `json:"workloadKinds,omitempty"`
	// MinOnDemandCount is a minimum number of replicas on on-demand nodes.
	// Defaults to 0.
	// +optional
	MinOnDemandCount *int32 `json:"minOnDemandCount,omitempty"`
	// MinOnDemandPercent, from 0 to 100, is a minimum share of the replicas
	// on on-demand nodes, rounded up. The minimum is the larger of the count
	// and the percentage, never more than the replicas; at least one of the
	// two must be above 0. Defaults to 0.
	// +optional
	MinOnDemandPercent *int32 `json:"minOnDemandPercent,omitempty"`
	// Capacity says which nodes are on-demand and which are spot. Defaults
	// to the Karpenter preset.
	// +optional
	Capacity *CapacityClasses `json:"capacity,omitempty"`
	// SpotWaitTimeout is how long a spot replica may stay unschedulable
	// before it is recreated on on-demand capacity. 0s waits forever.
	// Defaults to 5m.
	// +optional
	SpotWaitTimeout *metav1.Duration `json:"spotWaitTimeout,omitempty"`
	// Recovery moves replicas that fell back to on-demand back to spot when
	// a spot node fits them again.
	// +optional
	Recovery *SpotRecovery `json:"recovery,omitempty"`
}

// CapacityClasses tells on-demand nodes from spot nodes.
type CapacityClasses struct {
	// Preset is Karpenter, EKSManagedNodeGroup, GKE, AKS or Custom.
	// Defaults to Karpenter.
	// +optional
	Preset CapacityPreset `json:"preset,omitempty"`
	// OnDemand is what an on-demand replica requires of its node. Required
	// with the Custom preset, forbidden with the others.
	// +optional
	// +listType=atomic
	OnDemand []corev1.NodeSelectorRequirement `json:"onDemand,omitempty"`
	// Spot is what a spot replica requires of its node. Required with the
	// Custom preset, forbidden with the others.
	// +optional
	// +listType=atomic
	Spot []corev1.NodeSelectorRequirement `json:"spot,omitempty"`
	// SpotTolerations are added to spot replicas next to the preset's own
	// (the AKS preset tolerates its spot taint), for example the
	// cloud.google.com/gke-spot taint of GKE's node auto-provisioning.
	// +optional
	// +listType=atomic
	SpotTolerations []corev1.Toleration `json:"spotTolerations,omitempty"`
}

// SpotRecovery bounds the evictions that move replicas that fell back to
// on-demand back to spot.
type SpotRecovery struct {
	// Interval is how often recovery runs for a workload. 0s turns recovery
	// off. Defaults to 10m.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
	// MaxPodsPerInterval, from 1 to 1000, is how many replicas of one
	// workload recovery may evict per interval. Defaults to 1.
	// +optional
	MaxPodsPerInterval *int32 `json:"maxPodsPerInterval,omitempty"`
}
