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

// Package podowner answers what the plugins ask about a pod's controller.
package podowner

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsDaemonSetPod reports whether pod's controller is an apps/v1 DaemonSet:
// such pods run on every node the DaemonSet targets, so the plugins leave
// them out (ignoreDaemonSetPods). It does not allocate.
func IsDaemonSetPod(pod *v1.Pod) bool {
	owner := metav1.GetControllerOfNoCopy(pod)
	return owner != nil && owner.Kind == "DaemonSet" && owner.APIVersion == "apps/v1"
}
