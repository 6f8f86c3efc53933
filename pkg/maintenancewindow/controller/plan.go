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

package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The condition types of KEP-5683 (node lifecycle conditions) that the
// controller writes. Our own constants: k8s.io/api has them from v0.37 only,
// and the API server stores any condition type on every minor.
const (
	ConditionMaintenancePlanned    = "MaintenancePlanned"
	ConditionMaintenanceInProgress = "MaintenanceInProgress"
)

// The reasons the controller writes. A condition is the controller's iff
// its reason is one of these: a condition of the same type that an admin or
// another tool set carries another reason, and is left alone.
const (
	ReasonOpen       = "MaintenanceWindowOpen"
	ReasonPlanned    = "MaintenanceWindowPlanned"
	ReasonDrifted    = "KarpenterDrifted"
	ReasonDisrupting = "KarpenterDisrupting"
)

// ownReasons lists the reasons above, for the ownership check.
var ownReasons = []string{ReasonOpen, ReasonPlanned, ReasonDrifted, ReasonDisrupting}

// TaintKey and TaintValue make the taint the controller puts on a node in
// its open window (effect NoSchedule). The key is the one the README and the
// descheduler's maintenance policy name; the value marks the taint as the
// controller's, so that an admin's taint of the same key (another value) is
// never removed.
const (
	TaintKey   = "scheduling.adminsched.io/maintenance-window"
	TaintValue = "maintenancewindow-controller"
)

// span is one announced window, [Start, End); End zero: no known end (a
// Karpenter expiry: the node goes and does not come back).
type span struct {
	Start, End time.Time
	Source     string
}

func (s span) endedAt(now time.Time) bool { return !s.End.IsZero() && !s.End.After(now) }

// describe says when s is, for a condition's message.
func (s span) describe(verb string) string {
	start := s.Start.UTC().Format(time.RFC3339)
	if s.End.IsZero() {
		return fmt.Sprintf("window %s %s, with no known end (%s)", verb, start, s.Source)
	}
	return fmt.Sprintf("window %s %s until %s (%s)", verb, start, s.End.UTC().Format(time.RFC3339), s.Source)
}

// karpenterState is what a NodeClaim says beyond its expiry.
type karpenterState struct {
	claim               string
	drifted, disrupting bool
}

// plan is what a node should carry at a moment.
type plan struct {
	// open is the window (windows that overlap or touch merged) open now.
	open *span
	// planned is the next window that opens within the look-ahead.
	planned *span
	// karpenter, when drifted or disrupting, also plans maintenance.
	karpenter karpenterState
	// next is when the plan changes next; zero: never, unless the node does.
	next time.Time
}

// merge sorts spans and merges those that overlap or touch, as the plugin
// counts them as one; the sources of a merged window are joined.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.Start.Compare(b.Start) })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && (out[n-1].End.IsZero() || !s.Start.After(out[n-1].End)) {
			last := &out[n-1]
			if !last.End.IsZero() && (s.End.IsZero() || s.End.After(last.End)) {
				last.End = s.End
			}
			if !strings.Contains(last.Source, s.Source) {
				last.Source += ", " + s.Source
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// makePlan is the plan at now for a node with spans, announcing
// maintenance ahead before each window.
func makePlan(spans []span, k karpenterState, now time.Time, ahead time.Duration) plan {
	p := plan{karpenter: k}
	soonest := func(t time.Time) {
		if t.After(now) && (p.next.IsZero() || t.Before(p.next)) {
			p.next = t
		}
	}
	for _, s := range merge(spans) {
		switch {
		case s.endedAt(now):
			continue
		case !s.Start.After(now):
			p.open = &s
			soonest(s.End)
		default:
			if p.planned == nil && !s.Start.After(now.Add(ahead)) {
				p.planned = &s
			}
			soonest(s.Start.Add(-ahead))
			soonest(s.Start)
		}
	}
	return p
}

// plannedCondition returns the reason and message of MaintenancePlanned, ok
// false when nothing is planned. Karpenter's disruption comes first: it is
// imminent, a window may be hours away.
func (p *plan) plannedCondition() (reason, message string, ok bool) {
	switch {
	case p.karpenter.disrupting:
		return ReasonDisrupting, fmt.Sprintf("Karpenter is disrupting NodeClaim %s", p.karpenter.claim), true
	case p.karpenter.drifted:
		return ReasonDrifted, fmt.Sprintf("Karpenter marked NodeClaim %s Drifted: it will be replaced", p.karpenter.claim), true
	case p.planned != nil:
		return ReasonPlanned, p.planned.describe("opens at"), true
	}
	return "", "", false
}
