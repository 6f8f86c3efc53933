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

package maintenancewindow

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// GKEMaintenanceLabel is the node label by which GKE announces a VM's
// upcoming host maintenance: its start, in Unix epoch seconds
// (https://cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events).
const GKEMaintenanceLabel = "cloud.google.com/scheduled-maintenance-time"

// where says in which map of a node's metadata a source lives.
type where int

const (
	inAnnotations where = iota
	inLabels
)

func (w where) String() string {
	if w == inLabels {
		return "label"
	}
	return "annotation"
}

// format says how a source's value reads.
type format int

const (
	// formatIntervals: RFC 3339 intervals START/END, comma-separated.
	formatIntervals format = iota
	// formatUnixStart: one start in Unix epoch seconds; the window lasts
	// providerWindowDuration.
	formatUnixStart
)

// source is one place on a node that announces maintenance windows.
type source struct {
	key    string
	where  where
	format format
}

// providerSources are the cloud providers' signals read with
// providerSignals. Another provider's key or format is one entry here (and,
// for a new format, a case in windowCache.parseFormat).
var providerSources = []source{
	{key: GKEMaintenanceLabel, where: inLabels, format: formatUnixStart},
}

// value returns src's value on node, "" when it has none.
func (src *source) value(node *v1.Node) string {
	if src.where == inLabels {
		return node.Labels[src.key]
	}
	return node.Annotations[src.key]
}

// maxUnixStart is 9999-12-31T23:59:59Z, the last second RFC 3339 writes,
// past which earliestEnd's microseconds would not hold either.
const maxUnixStart = 253402300799

// parseUnixStart parses a start in Unix epoch seconds, such as GKE's
// "1733083200", into one window of length d. Only digits are allowed: no
// sign, no fraction, no blanks.
func parseUnixStart(value string, d time.Duration) ([]window, error) {
	for _, c := range []byte(value) {
		if c < '0' || c > '9' {
			return nil, fmt.Errorf("%q: want the start in Unix epoch seconds, digits only", value)
		}
	}
	secs, err := strconv.ParseInt(value, 10, 64)
	if err != nil || secs > maxUnixStart {
		return nil, fmt.Errorf("%q: want the start in Unix epoch seconds, at most %d", value, int64(maxUnixStart))
	}
	start := time.Unix(secs, 0).UTC()
	return []window{{start: start, end: start.Add(d)}}, nil
}

// nodeWindows returns the maintenance windows that node announces through
// every source, sorted by start. A malformed value has none and is logged
// once. It allocates only when two sources have windows.
func (pl *MaintenanceWindow) nodeWindows(logger klog.Logger, node *v1.Node) []window {
	var ws []window
	merged := false
	for i := range pl.sources {
		src := &pl.sources[i]
		value := src.value(node)
		if value == "" {
			continue
		}
		got := pl.windows.windows(logger, node.Name, *src, value)
		ws, merged = mergeWindows(ws, got, merged)
	}
	return ws
}

// parseNodeWindows is nodeWindows without logging, and with the first
// reason a source does not parse: the metrics' scrape counts such nodes.
func (pl *MaintenanceWindow) parseNodeWindows(node *v1.Node) ([]window, bool, error) {
	var ws []window
	merged, found := false, false
	var firstErr error
	for i := range pl.sources {
		src := &pl.sources[i]
		value := src.value(node)
		if value == "" {
			continue
		}
		found = true
		got, err := pl.windows.parse(src.format, value)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		ws, merged = mergeWindows(ws, got, merged)
	}
	return ws, found, firstErr
}

// mergeWindows adds got to ws. The cached slices are shared by every node
// with the same value, so they are never appended to: the first source's
// slice is returned as is, and the second makes a copy (owned says ws is
// one already).
func mergeWindows(ws, got []window, owned bool) ([]window, bool) {
	switch {
	case len(got) == 0:
		return ws, owned
	case len(ws) == 0:
		return got, false
	}
	if !owned {
		ws = append(make([]window, 0, len(ws)+len(got)), ws...)
	}
	ws = append(ws, got...)
	slices.SortFunc(ws, func(a, b window) int { return a.start.Compare(b.start) })
	return ws, true
}
