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

package admission

import "fmt"

// Served is the admissionregistration.k8s.io version at which a
// kube-apiserver serves MutatingAdmissionPolicy, and what it takes to turn
// it on there.
type Served struct {
	// Minor is the Kubernetes minor, 37 for 1.37.
	Minor int
	// Version is the API version: v1 from 1.36, v1beta1 in 1.35.
	Version string
	// Enable, when not empty, is what the API server needs for it.
	Enable string
}

// oldestMinor is the oldest minor upstream supports and renders for.
const oldestMinor = 35

// ServedBy returns how a kube-apiserver of Kubernetes 1.<minor> serves
// MutatingAdmissionPolicy. newest is the minor the caller is built from: a
// kube-apiserver may be one minor newer than the scheduler, not more.
func ServedBy(minor, newest int) (Served, error) {
	switch {
	case minor < oldestMinor:
		return Served{}, fmt.Errorf("Kubernetes 1.%d: renders for 1.%d to 1.%d (the minors upstream supports; MutatingAdmissionPolicy is v1beta1 from 1.34, v1 from 1.36)", minor, oldestMinor, newest+1)
	case minor > newest+1:
		return Served{}, fmt.Errorf("Kubernetes 1.%d: renders for 1.%d to 1.%d; this build knows the API of 1.%d, and a kube-apiserver may be one minor newer than the scheduler", minor, oldestMinor, newest+1, newest)
	case minor == 35:
		return Served{Minor: minor, Version: "v1beta1",
			Enable: "the feature gate MutatingAdmissionPolicy=true and --runtime-config=admissionregistration.k8s.io/v1beta1=true on every kube-apiserver (beta, off by default in 1.35)"}, nil
	}
	return Served{Minor: minor, Version: "v1"}, nil
}
