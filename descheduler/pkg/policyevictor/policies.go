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
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// The evictor asks our scheduler plugins' own matching code (wired in
// wiring.go) through these interfaces, so that tests can stand in for it.

// ruleSet is what PlacementPolicy's rules say of one pod on a node.
type ruleSet interface {
	// Admits reports whether node matches every Require rule, and names
	// the first rule it does not match otherwise.
	Admits(node *v1.Node) (bool, string)
	// Preference is the summed weight of the Prefer rules node matches.
	Preference(node *v1.Node) int64
}

// placement is one profile's compiled PlacementPolicy rules.
type placement interface {
	// forPod returns the rules that apply to pod, and whether a Require
	// and whether a Prefer rule is among them; an error when it cannot
	// tell (the pod's namespace is not known yet).
	forPod(pod *v1.Pod) (rules ruleSet, required, preferred bool, err error)
}

// windows is one profile's MaintenanceWindow decision.
type windows interface {
	// exempt reports whether windows never keep pod off a node.
	exempt(pod *v1.Pod) bool
	// carries reports whether node announces a window.
	carries(node *v1.Node) bool
	// blocks reports whether a window keeps pod off node at now, with the
	// reason.
	blocks(logger klog.Logger, pod *v1.Pod, node *v1.Node, now time.Time) (bool, string)
}
