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

package policyevictor

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PreferredMode says whether PlacementPolicy's Prefer rules count.
type PreferredMode string

const (
	// PreferredRespect refuses an eviction when every node the pod could go
	// to is less preferred than its current one, and lets Prefer rules
	// make a pod subject to the evictor.
	PreferredRespect PreferredMode = "Respect"
	// PreferredIgnore reads only Require rules.
	PreferredIgnore PreferredMode = "Ignore"
)

// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PolicyEvictorArgs holds the arguments of the PolicyEvictor plugin. They
// are decoded strictly within a descheduler/v1alpha2 policy; new fields
// must stay optional.
type PolicyEvictorArgs struct {
	metav1.TypeMeta `json:",inline"`

	// SchedulerConfig is the path of the KubeSchedulerConfiguration the
	// scheduler runs (its ConfigMap, mounted): the rules and windows come
	// from there, so both binaries read the same ones. Required.
	SchedulerConfig string `json:"schedulerConfig"`
	// SchedulerName is the profile whose args apply. Empty means the only
	// profile that runs PlacementPolicy or MaintenanceWindow; it is an
	// error when there are several.
	SchedulerName string `json:"schedulerName,omitempty"`
	// Preferred is Respect (the default) or Ignore.
	Preferred PreferredMode `json:"preferred,omitempty"`
	// AdmittedTTL is how long an admitted eviction counts against its
	// target node's free capacity, until the informers show the
	// replacement pod. Default 2m; must be positive.
	AdmittedTTL *metav1.Duration `json:"admittedTTL,omitempty"`
	// NodeSelector, a label selector, limits the nodes a pod may go to, as
	// DefaultEvictor's does.
	NodeSelector string `json:"nodeSelector,omitempty"`
}
