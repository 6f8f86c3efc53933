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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DefaultMaintenanceWindowAnnotation is the node annotation MaintenanceWindow
// reads unless its args name another.
const DefaultMaintenanceWindowAnnotation = "scheduling.adminsched.io/maintenance-window"

// DefaultMaintenanceRuntimeMargin is how long before a window a pod of known
// runtime must end unless the args say otherwise: the pod's deadline counts
// from the kubelet's start of it, and its termination grace period (30s by
// default) comes after.
const DefaultMaintenanceRuntimeMargin = 10 * time.Minute

// DefaultProviderWindowDuration is the length assumed for a provider's
// window of which only the start is published.
const DefaultProviderWindowDuration = time.Hour

// SetDefaults_NodeLessPodsArgs fills the optional fields that have a default.
func SetDefaults_NodeLessPodsArgs(obj *NodeLessPodsArgs) {
	if obj.Mode == "" {
		obj.Mode = NodeLessPodsLeastPods
	}
	if obj.IgnoreDaemonSetPods == nil {
		obj.IgnoreDaemonSetPods = ptr.To(true)
	}
	if obj.RelativeToCapacity == nil {
		obj.RelativeToCapacity = ptr.To(false)
	}
}

// SetDefaults_PlacementPolicyArgs sets the defaults of PlacementPolicyArgs.
func SetDefaults_PlacementPolicyArgs(obj *PlacementPolicyArgs) {
	if obj.IgnoreDaemonSetPods == nil {
		obj.IgnoreDaemonSetPods = ptr.To(true)
	}
	for i := range obj.Rules {
		if obj.Rules[i].Action == PlacementPrefer && obj.Rules[i].Weight == nil {
			obj.Rules[i].Weight = ptr.To[int32](1)
		}
	}
}

// SetDefaults_MaintenanceWindowArgs sets the defaults of MaintenanceWindowArgs.
func SetDefaults_MaintenanceWindowArgs(obj *MaintenanceWindowArgs) {
	if obj.AnnotationKey == nil {
		obj.AnnotationKey = ptr.To(DefaultMaintenanceWindowAnnotation)
	}
	if obj.AvoidWithin == nil {
		obj.AvoidWithin = &metav1.Duration{}
	}
	if obj.Horizon == nil {
		obj.Horizon = &metav1.Duration{Duration: 24 * time.Hour}
	}
	if obj.IgnoreDaemonSetPods == nil {
		obj.IgnoreDaemonSetPods = ptr.To(true)
	}
	if obj.RuntimeAware == nil {
		obj.RuntimeAware = ptr.To(true)
	}
	if obj.RuntimeMargin == nil {
		obj.RuntimeMargin = &metav1.Duration{Duration: DefaultMaintenanceRuntimeMargin}
	}
	if obj.ProviderSignals == nil {
		obj.ProviderSignals = ptr.To(true)
	}
	if obj.ProviderWindowDuration == nil {
		obj.ProviderWindowDuration = &metav1.Duration{Duration: DefaultProviderWindowDuration}
	}
	if obj.NodeConditions == nil {
		obj.NodeConditions = ptr.To(true)
	}
	if obj.PlannedWithoutTime == "" {
		obj.PlannedWithoutTime = PlannedAvoid
	}
	if obj.Karpenter == nil {
		obj.Karpenter = ptr.To(true)
	}
}

// Defaults of an OnDemandSharePolicy.
const (
	DefaultSpotWaitTimeout          = 5 * time.Minute
	DefaultSpotRecoveryInterval     = 10 * time.Minute
	DefaultSpotRecoveryMaxPerPeriod = 1
)

// SetDefaults_OnDemandShareArgs sets the defaults of every policy.
func SetDefaults_OnDemandShareArgs(obj *OnDemandShareArgs) {
	for i := range obj.Policies {
		setDefaultsOnDemandSharePolicy(&obj.Policies[i])
	}
}

func setDefaultsOnDemandSharePolicy(p *OnDemandSharePolicy) {
	if len(p.WorkloadKinds) == 0 {
		p.WorkloadKinds = []WorkloadKind{WorkloadDeployment, WorkloadStatefulSet, WorkloadJob}
	}
	if p.MinOnDemandCount == nil {
		p.MinOnDemandCount = ptr.To[int32](0)
	}
	if p.MinOnDemandPercent == nil {
		p.MinOnDemandPercent = ptr.To[int32](0)
	}
	if p.Capacity == nil {
		p.Capacity = &CapacityClasses{}
	}
	if p.Capacity.Preset == "" {
		p.Capacity.Preset = CapacityKarpenter
	}
	if p.SpotWaitTimeout == nil {
		p.SpotWaitTimeout = &metav1.Duration{Duration: DefaultSpotWaitTimeout}
	}
	if p.Recovery == nil {
		p.Recovery = &SpotRecovery{}
	}
	if p.Recovery.Interval == nil {
		p.Recovery.Interval = &metav1.Duration{Duration: DefaultSpotRecoveryInterval}
	}
	if p.Recovery.MaxPodsPerInterval == nil {
		p.Recovery.MaxPodsPerInterval = ptr.To[int32](DefaultSpotRecoveryMaxPerPeriod)
	}
}
