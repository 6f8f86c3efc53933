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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SchedulingGate is the scheduling gate that admission puts on the pods of
// a team under a NodePoolQuota, and that the quota controller lifts while
// the team has room in the pool. Autoscalers do not provision nodes for a
// gated pod.
const SchedulingGate = "scheduling.adminsched.io/nodepool-quota"

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=npq
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Teams",type=integer,JSONPath=`.status.teamCount`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Held",type=integer,JSONPath=`.status.heldPods`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NodePoolQuota caps what teams may request on one pool of nodes, e.g.
// "team-a may use at most 64 nvidia.com/gpu on the h100 nodes", while the
// same teams are free elsewhere. A pod counts against the quota when it is
// bound (or assumed by the scheduler) to a node the pool selects and its
// namespace belongs to one of the teams.
type NodePoolQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the pool and the teams' limits in it.
	// +required
	Spec NodePoolQuotaSpec `json:"spec"`
	// Status is the teams' usage as the quota controller last observed it.
	// +optional
	Status NodePoolQuotaStatus `json:"status,omitempty"`
}

// NodePoolQuotaSpec is a pool of nodes and the teams limited in it.
type NodePoolQuotaSpec struct {
	// NodeSelector selects the pool's nodes by their labels, e.g.
	// {matchLabels: {pool: h100}} or an In expression on
	// node.kubernetes.io/instance-type. An empty selector selects every node.
	// +required
	NodeSelector metav1.LabelSelector `json:"nodeSelector"`
	// Teams are the teams limited in the pool, each with its namespaces and
	// limits. A team's name is unique in the list.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	Teams []TeamQuota `json:"teams"`
}

// The rule counts namespaces rather than testing has(): an explicit empty
// list is present but names no namespace.
// +kubebuilder:validation:XValidation:rule="(has(self.namespaces) && size(self.namespaces) > 0) || has(self.namespaceSelector)",message="a team needs namespaces or a namespaceSelector"

// TeamQuota is one team's namespaces and its limits in the pool.
type TeamQuota struct {
	// Name names the team in status, events, metrics and the scheduler's
	// messages.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Namespaces are the team's namespaces by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector selects the team's namespaces by their labels. A
	// namespace named in namespaces or selected here belongs to the team.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// Limits is, per resource, the most that the team's pods on the pool's
	// nodes may request in total: cpu, memory, ephemeral-storage, pods (the
	// number of pods), or an extended resource such as nvidia.com/gpu. A
	// resource not listed is not limited.
	// +required
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=32
	Limits corev1.ResourceList `json:"limits"`
}

// NodePoolQuotaStatus is what the quota controller observed.
type NodePoolQuotaStatus struct {
	// ObservedGeneration is the spec's generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Nodes is the number of nodes the pool selects.
	// +optional
	Nodes int32 `json:"nodes"`
	// TeamCount is the number of teams in spec, for kubectl get.
	// +optional
	TeamCount int32 `json:"teamCount"`
	// HeldPods is the number of pods of every team that wait for room in
	// the pool (gated, or rejected by the scheduler for the quota).
	// +optional
	HeldPods int32 `json:"heldPods"`
	// Teams is each team's usage in the pool.
	// +optional
	// +listType=map
	// +listMapKey=name
	Teams []TeamUsage `json:"teams,omitempty"`
	// Conditions: Valid (False names what is wrong with the spec, e.g. a
	// selector matching no node or a namespace in two teams) and AtLimit
	// (True while a team is held at one of its limits).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TeamUsage is one team's usage in the pool.
type TeamUsage struct {
	// Name is the team's name in spec.
	// +required
	Name string `json:"name"`
	// Used is, per limited resource, what the team's pods bound to the
	// pool's nodes request.
	// +optional
	Used corev1.ResourceList `json:"used,omitempty"`
	// Held is the number of the team's pods that wait for room in the pool.
	// +optional
	Held int32 `json:"held"`
	// OverLimit lists the resources whose usage is above the limit, e.g.
	// after the limit was lowered: no pod is evicted, new pods wait.
	// +optional
	// +listType=set
	OverLimit []corev1.ResourceName `json:"overLimit,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// NodePoolQuotaList is a list of NodePoolQuotas.
type NodePoolQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodePoolQuotas.
	Items []NodePoolQuota `json:"items"`
}
