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

package localcluster

// This file bridges the PodGroup API as 1.37 serves it:
// scheduling.k8s.io/v1beta1 (since 1.37), off by default, behind the
// GenericWorkload gate (beta, off by default), which only the API server
// needs here.

// PodGroupAPIVersion is the group/version WithPodGroupAPI serves.
const PodGroupAPIVersion = "scheduling.k8s.io/v1beta1"

// PodGroupGates are the feature gates the PodGroup API and pod-group
// scheduling need; a scheduler that schedules PodGroups needs them too.
var PodGroupGates = []string{"GenericWorkload"}

// podGroupGatesOnControllerManager: the controllers Start runs need no gate.
const podGroupGatesOnControllerManager = false
