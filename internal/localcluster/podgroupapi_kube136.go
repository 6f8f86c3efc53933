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

package localcluster

// This file bridges the PodGroup API as 1.36 serves it:
// scheduling.k8s.io/v1alpha2 (since 1.36), behind the GenericWorkload gate
// and, for gangs, GangScheduling (both alpha, off by default).

// PodGroupAPIVersion is the group/version WithPodGroupAPI serves.
const PodGroupAPIVersion = "scheduling.k8s.io/v1alpha2"

// PodGroupGates are the feature gates the PodGroup API and pod-group
// scheduling need; a scheduler that schedules PodGroups needs them too.
var PodGroupGates = []string{"GenericWorkload", "GangScheduling"}

// podGroupGatesOnControllerManager: alpha gates are switched on in every
// component, as on a real 1.36 cluster with pod groups, so that the
// controller-manager sees the same API as the API server.
const podGroupGatesOnControllerManager = true
