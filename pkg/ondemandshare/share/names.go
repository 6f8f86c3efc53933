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

package share

// The names the admission policy, the controller and the plugin agree on.
// The scheduling gate and the policy label are written at creation by the
// rendered admission policy; the controller writes the slot and class labels
// and removes the gate in one update, so a pod is either gated and undecided
// or ungated and decided, never half of both.
const (
	// SchedulingGate holds a selected pod until its class is decided.
	SchedulingGate = "ondemandshare.adminsched.io/decide"
	// PolicyLabel names the policy that selected the pod; the controller
	// watches only pods with it.
	PolicyLabel = "ondemandshare.adminsched.io/policy"
	// SlotLabel is the decided pod's slot in its workload, from 1.
	SlotLabel = "ondemandshare.adminsched.io/slot"
	// ClassLabel is the decided class: on-demand or spot.
	ClassLabel = "ondemandshare.adminsched.io/class"
	// FallbackAnnotation on a decided pod says why it went on-demand outside
	// the minimum, for example spot-timeout.
	FallbackAnnotation = "ondemandshare.adminsched.io/fallback"
)
