//go:build kube1.36

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
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	schedulingclient "k8s.io/client-go/kubernetes/typed/scheduling/v1alpha2"
)

// This file bridges the PodGroup API of 1.36: scheduling.k8s.io/v1alpha2
// (since 1.36), whose condition is PodGroupScheduled.
type (
	podGroup                 = schedulingv1alpha2.PodGroup
	podGroupSpec             = schedulingv1alpha2.PodGroupSpec
	podGroupSchedulingPolicy = schedulingv1alpha2.PodGroupSchedulingPolicy
	gangSchedulingPolicy     = schedulingv1alpha2.GangSchedulingPolicy
)

const (
	// podGroupScheduled is the condition type that says whether the
	// group's scheduling requirement was met.
	podGroupScheduled = schedulingv1alpha2.PodGroupScheduled
	// podGroupUnschedulable is its reason when the group cannot be
	// scheduled.
	podGroupUnschedulable = schedulingv1alpha2.PodGroupReasonUnschedulable
)

// podGroups is the PodGroup client of namespace ns.
func podGroups(ns string) schedulingclient.PodGroupInterface {
	return adminClient.SchedulingV1alpha2().PodGroups(ns)
}
