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

package window

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// KarpenterNodePoolLabel is the label Karpenter puts on every node it
// launches. Sources counts such nodes as announcing (Carries) once it has
// NodeClaims, since a NodeClaim's change is no node event.
const KarpenterNodePoolLabel = "karpenter.sh/nodepool"

// NodeClaims tells what Karpenter plans for the node a NodeClaim launched.
type NodeClaims interface {
	// ForNode returns the NodeClaim of node, found by the node's name or,
	// before Karpenter records that name, by its spec.providerID; ok is
	// false when no NodeClaim launched it. It is called from Filter and
	// Score on parallel goroutines and must not allocate.
	ForNode(node *v1.Node) (NodeClaim, bool)
}

// NodeClaim is what Karpenter plans for a node.
type NodeClaim struct {
	Name string
	// ExpiresAt is when Karpenter replaces the node (the NodeClaim's
	// creation plus its expireAfter); zero: never.
	ExpiresAt time.Time
	// Drifted is the NodeClaim's Drifted condition True: Karpenter will
	// replace the node.
	Drifted bool
	// Disrupting is its DisruptionReason condition True: Karpenter is
	// disrupting the node now.
	Disrupting bool
}

// windows returns the windows c announces, sorted by start, nil for none:
// drift and disruption are open with no end, expiry opens at ExpiresAt and
// has none.
func (c NodeClaim) windows() []Window {
	var ws []Window
	if c.Disrupting {
		ws = append(ws, Window{End: Unbounded, Signal: SignalKarpenterDisrupting})
	}
	if c.Drifted {
		ws = append(ws, Window{End: Unbounded, Signal: SignalKarpenterDrifted})
	}
	if !c.ExpiresAt.IsZero() {
		ws = append(ws, Window{Start: c.ExpiresAt, End: Unbounded, Signal: SignalKarpenterExpiry})
	}
	return ws
}

// announces reports whether c plans anything for its node.
func (c NodeClaim) announces() bool { return c.Disrupting || c.Drifted || !c.ExpiresAt.IsZero() }

// claimFor returns the NodeClaim of node, ok false without Karpenter's
// source or claim.
func (s *Sources) claimFor(node *v1.Node) (NodeClaim, bool) {
	if s.claims == nil {
		return NodeClaim{}, false
	}
	return s.claims.ForNode(node)
}

// SetNodeClaims gives s Karpenter's NodeClaims; nil, or the karpenter arg
// off, reads none. It must be called before s is used (before the
// scheduler's first cycle and its informers start): it is not synchronized
// with Filter and Score.
func (s *Sources) SetNodeClaims(claims NodeClaims) {
	if !s.karpenter {
		return
	}
	s.claims = claims
}
