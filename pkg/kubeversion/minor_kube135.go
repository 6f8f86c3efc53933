//go:build kube1.35

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

package kubeversion

import schedulingv1alpha1 "k8s.io/api/scheduling/v1alpha1"

// The tag and the module file must agree: this API version exists only in
// the k8s.io/api of this minor, so a build with the tag and another minor's
// module file fails here, at compile time.
var _ schedulingv1alpha1.Workload

// Minor is the Kubernetes minor of this build's k8s.io libraries
// (go.1.35.mod).
const Minor = 35
