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

// Package window is MaintenanceWindow's decision without the scheduler
// framework: the windows nodes announce (our annotation, the cloud
// providers' labels, Kubernetes' node lifecycle conditions and Karpenter's
// NodeClaims), whether they keep a pod off a node now, and which pods are
// exempt. The scheduler plugin and the descheduler's evictor both
// call it, so both judge a node the same way.
package window

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Window is one planned maintenance interval, [Start, End).
type Window struct {
	Start, End time.Time
	// Signal is what announced the window: SignalTimed for the times of
	// our annotation or a provider's label.
	Signal Signal
}

// MaxWindows bounds how many intervals one annotation may hold, so that a
// runaway value cannot make every Filter call slow.
const MaxWindows = 64

// Parse parses an annotation value: RFC 3339 intervals START/END,
// comma-separated, in any order. Blank items are ignored; an empty value
// has no window. The windows come back sorted by start.
func Parse(value string) ([]Window, error) {
	var ws []Window
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if len(ws) == MaxWindows {
			return nil, fmt.Errorf("more than %d intervals", MaxWindows)
		}
		startText, endText, ok := strings.Cut(item, "/")
		if !ok {
			return nil, fmt.Errorf("interval %q: want START/END, two RFC 3339 times", item)
		}
		start, err := time.Parse(time.RFC3339, strings.TrimSpace(startText))
		if err != nil {
			return nil, fmt.Errorf("interval %q: start: %w", item, err)
		}
		end, err := time.Parse(time.RFC3339, strings.TrimSpace(endText))
		if err != nil {
			return nil, fmt.Errorf("interval %q: end: %w", item, err)
		}
		if !end.After(start) {
			return nil, fmt.Errorf("interval %q: the end is not after the start", item)
		}
		ws = append(ws, Window{Start: start, End: end})
	}
	sortByStart(ws)
	return ws, nil
}

func sortByStart(ws []Window) {
	slices.SortStableFunc(ws, func(a, b Window) int { return a.Start.Compare(b.Start) })
}

// BlockedUntil returns, when a window is open at now or opens within
// avoidWithin of now, the end of the maintenance that blocks the node
// (through any windows that overlap or touch it), and the window's start.
// ws must be sorted by start.
func BlockedUntil(ws []Window, now time.Time, avoidWithin time.Duration) (start, until time.Time, blocked bool) {
	b, blocked := Blocking(ws, now, avoidWithin)
	return b.Start, b.Until, blocked
}

// Blocking is BlockedUntil with what announced the maintenance. Windows
// that only rank a node are passed over, and so is MaintenancePlanned
// while a window of known times has not ended.
func Blocking(ws []Window, now time.Time, avoidWithin time.Duration) (Block, bool) {
	horizon := now.Add(avoidWithin)
	for i, w := range ws {
		if !w.End.After(now) || w.Signal.scoreOnly() || yields(ws, w, now) {
			continue
		}
		if w.Start.After(horizon) {
			return Block{}, false
		}
		b := Block{Start: w.Start, Until: w.End, Signal: w.Signal, Since: w.Start}
		for _, next := range ws[i+1:] {
			if next.Start.After(b.Until) {
				break
			}
			if next.Signal.scoreOnly() || yields(ws, next, now) || !next.End.After(b.Until) {
				continue
			}
			b.Until = next.End
			if IsUnbounded(next.End) {
				// The message names what keeps the node blocked for good.
				b.Signal, b.Since = next.Signal, next.Start
			}
		}
		return b, true
	}
	return Block{}, false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// NextStart returns how long until the next window that has not ended
// opens: 0 when one is open, ok false when there is none. MaintenancePlanned
// without a time counts as open unless a window of known times has not
// ended.
func NextStart(ws []Window, now time.Time) (time.Duration, bool) {
	for _, w := range ws {
		if !w.End.After(now) || yields(ws, w, now) {
			continue
		}
		if !w.Start.After(now) {
			return 0, true
		}
		return w.Start.Sub(now), true
	}
	return 0, false
}
