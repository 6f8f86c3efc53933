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

package nodeclaims

import "time"

// NodeClaims and NodeClaim stand in for the same types that package window
// is gaining; once window has them, this file becomes aliases of them (or
// goes) so that *Index satisfies window.NodeClaims unchanged.

// NodeClaims answers, for a node, what its Karpenter NodeClaim says about
// the node's coming disruption.
type NodeClaims interface {
	ForNode(nodeName string) (NodeClaim, bool)
}

// NodeClaim is what the scheduler needs of a Karpenter NodeClaim.
type NodeClaim struct {
	Name string
	// ExpiresAt is creationTimestamp + spec.expireAfter; zero: never.
	ExpiresAt time.Time
	// Drifted: condition Drifted is True (Karpenter will replace the node).
	Drifted bool
	// Disrupting: condition DisruptionReason is True (chosen for disruption).
	Disrupting bool
}
