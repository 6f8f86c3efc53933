//go:build !kube1.36 && !kube1.35

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

package integration

import (
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	schedulingclient "k8s.io/client-go/kubernetes/typed/scheduling/v1beta1"
)

// This file bridges the PodGroup API of 1.37: scheduling.k8s.io/v1beta1
// (since 1.37), whose first-success condition is PodGroupInitiallyScheduled.
type (
	podGroup                 = schedulingv1beta1.PodGroup
	podGroupSpec             = schedulingv1beta1.PodGroupSpec
	podGroupSchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy
	gangSchedulingPolicy     = schedulingv1beta1.GangSchedulingPolicy
)

const (
	// podGroupScheduled is the condition type that says whether the
	// group's scheduling requirement was met.
	podGroupScheduled = schedulingv1beta1.PodGroupInitiallyScheduled
	// podGroupUnschedulable is its reason when the group cannot be
	// scheduled.
	podGroupUnschedulable = schedulingv1beta1.PodGroupReasonUnschedulable
)

// podGroups is the PodGroup client of namespace ns.
func podGroups(ns string) schedulingclient.PodGroupInterface {
	return adminClient.SchedulingV1beta1().PodGroups(ns)
}
