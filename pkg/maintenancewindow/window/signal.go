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
	"fmt"
	"time"
)

// Unbounded is the end of a window whose end nobody announces: a node
// being drained, or one Karpenter will replace. Callers that plan a retry
// at a window's end must not plan one at Unbounded (see IsUnbounded): only
// an event on the node (or its NodeClaim) can end such a window. It is the
// last second RFC 3339 writes, which Unix microseconds still hold.
var Unbounded = time.Date(9999, time.December, 31, 23, 59, 59, 0, time.UTC)

// IsUnbounded reports whether t, the end of a maintenance, is unknown.
func IsUnbounded(t time.Time) bool { return !t.Before(Unbounded) }

// Signal says what announced a window.
type Signal uint8

const (
	// SignalTimed is a window of known times: our annotation or a
	// provider's label.
	SignalTimed Signal = iota
	// SignalDrainInProgress and the next two are node conditions that are
	// True: maintenance is under way, its end unknown.
	SignalDrainInProgress
	SignalDrained
	SignalMaintenanceInProgress
	// SignalMaintenancePlanned is MaintenancePlanned=True with
	// plannedWithoutTime Avoid: an open window of unknown end, unless a
	// window of known times has not ended.
	SignalMaintenancePlanned
	// SignalMaintenancePlannedScore is the same with plannedWithoutTime
	// Score: it ranks the node as if its window opened now, and filters
	// nothing.
	SignalMaintenancePlannedScore
	// SignalKarpenterExpiry opens at the NodeClaim's expiry, and does not
	// end: Karpenter replaces the node.
	SignalKarpenterExpiry
	SignalKarpenterDrifted
	SignalKarpenterDisrupting
)

// scoreOnly reports whether windows of s rank nodes without filtering them.
func (s Signal) scoreOnly() bool { return s == SignalMaintenancePlannedScore }

// untimed reports whether s says maintenance is planned without saying
// when: a window of known times then says it instead.
func (s Signal) untimed() bool {
	return s == SignalMaintenancePlanned || s == SignalMaintenancePlannedScore
}

// yields reports whether w, of the windows ws, gives way at now to a
// window of known times that has not ended.
func yields(ws []Window, w Window, now time.Time) bool {
	if !w.Signal.untimed() {
		return false
	}
	for _, o := range ws {
		if o.Signal == SignalTimed && o.End.After(now) {
			return true
		}
	}
	return false
}

// Block is the maintenance that keeps pods off a node: from Start until
// Until (Unbounded when unknown), announced by Signal, whose window opens
// at Since.
type Block struct {
	Start, Until time.Time
	Signal       Signal
	Since        time.Time
}

// Reason is the rejection's message at now: what announced the
// maintenance, or its times.
func (b Block) Reason(now time.Time) string {
	switch b.Signal {
	case SignalDrainInProgress, SignalDrained, SignalMaintenanceInProgress, SignalMaintenancePlanned:
		return fmt.Sprintf("node has condition %s=True", conditionOf(b.Signal))
	case SignalKarpenterExpiry:
		return "Karpenter expires the node at " + b.Since.UTC().Format(time.RFC3339)
	case SignalKarpenterDrifted:
		return "Karpenter marked the node Drifted"
	case SignalKarpenterDisrupting:
		return "Karpenter is disrupting the node"
	}
	return Reason(now, b.Start, b.Until)
}
