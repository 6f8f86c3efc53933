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
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// nodeKey is a sample of the node gauge: a state and the source that puts
// nodes in it.
type nodeKey struct{ state, source string }

// parsesValues reports whether source is a value in node metadata, which
// may not parse (the state invalid); the others are read from objects the
// API server validated.
func parsesValues(source string) bool {
	return source == window.SourceAnnotation || source == window.SourceGKELabel
}

// countNodeStates adds the nodes of the scheduler's node informer to counts
// by window state and source, each source judged alone at now, with the
// plugin's args, as Filter and Score judge its windows. The windows come
// from the sources' parse cache, and the scratch space is reused from node
// to node: a node with no signal costs a lookup per source, and one with
// signals allocates nothing once the scratch space has grown.
func (pl *MaintenanceWindow) countNodeStates(counts map[nodeKey]int) {
	nodes, err := pl.nodes.List(labels.Everything())
	if err != nil {
		return
	}
	now := pl.clock.Now()
	var sc scratch
	for _, node := range nodes {
		pl.countNode(node, now, counts, &sc)
	}
}

// scratch is the space one scrape reuses from node to node.
type scratch struct {
	own []window.Window
	// alone is a node with a single value, one, parsed through the
	// cache (which keeps neither).
	alone v1.Node
	one   map[string]string
}

// countNode adds node's state by each source that announces something for
// it.
func (pl *MaintenanceWindow) countNode(node *v1.Node, now time.Time, counts map[nodeKey]int, sc *scratch) {
	ws, found, err := pl.sources.Parse(node)
	if !found {
		return
	}
	list := pl.sources.List()
	values := 0
	for i := range list {
		if list[i].Value(node) != "" {
			values++
		}
	}
	for i := range list {
		src := &list[i]
		if src.Value(node) == "" {
			continue
		}
		own, ownErr := ws, err
		if values > 1 {
			// ws and err are every value's: parse this one alone.
			own, ownErr = sc.parseAlone(pl.sources, src, node)
		}
		if ownErr != nil {
			counts[nodeKey{stateInvalid, src.Name}]++
			continue
		}
		sc.own = ownWindows(sc.own[:0], own, "", now)
		pl.countState(counts, sc.own, src.Name, now)
	}
	for _, name := range [...]string{window.SourceNodeCondition, window.SourceKarpenter} {
		if sc.own = ownWindows(sc.own[:0], ws, name, now); len(sc.own) > 0 {
			pl.countState(counts, sc.own, name, now)
		}
	}
}

// countState adds the state that ws, of source, put a node in at now.
func (pl *MaintenanceWindow) countState(counts map[nodeKey]int, ws []window.Window, source string, now time.Time) {
	if state, ok := pl.windowState(ws, now); ok {
		counts[nodeKey{state, source}]++
	}
}

// parseAlone parses node's value of src as if node had no other signal.
// Only nodes with values in two sources take this path.
func (sc *scratch) parseAlone(s *window.Sources, src *window.Source, node *v1.Node) ([]window.Window, error) {
	if sc.one == nil {
		sc.one = map[string]string{}
	}
	clear(sc.one)
	sc.one[src.Key] = src.Value(node)
	sc.alone.Labels, sc.alone.Annotations = nil, sc.one
	if src.Where == window.InLabels {
		sc.alone.Labels, sc.alone.Annotations = sc.one, nil
	}
	ws, _, err := s.Parse(&sc.alone)
	return ws, err
}

// ownWindows appends to dst the windows of ws that source announces ("":
// the windows of known times). MaintenancePlanned without a time is left
// out while a window of known times has not ended: that window says when,
// as Filter and Score judge it.
func ownWindows(dst, ws []window.Window, source string, now time.Time) []window.Window {
	timed := false
	for _, w := range ws {
		if w.Signal == window.SignalTimed && w.End.After(now) {
			timed = true
		}
	}
	for _, w := range ws {
		if sourceOf(w.Signal) != source {
			continue
		}
		if timed && (w.Signal == window.SignalMaintenancePlanned || w.Signal == window.SignalMaintenancePlannedScore) {
			continue
		}
		dst = append(dst, w)
	}
	return dst
}

// sourceOf names the source of windows announced by s, "" for a window of
// known times (the annotation's or a provider's label).
func sourceOf(s window.Signal) string {
	switch s {
	case window.SignalDrainInProgress, window.SignalDrained, window.SignalMaintenanceInProgress,
		window.SignalMaintenancePlanned, window.SignalMaintenancePlannedScore:
		return window.SourceNodeCondition
	case window.SignalKarpenterExpiry, window.SignalKarpenterDrifted, window.SignalKarpenterDisrupting:
		return window.SourceKarpenter
	}
	return ""
}

// nodeState returns node's window state at now, every source together;
// ok is false for a node with no window within the horizon (nor within
// avoidWithin).
func (pl *MaintenanceWindow) nodeState(node *v1.Node, now time.Time) (string, bool) {
	ws, found, err := pl.sources.Parse(node)
	if !found {
		return "", false
	}
	if err != nil {
		return stateInvalid, true
	}
	return pl.windowState(ws, now)
}

// windowState returns the state that ws, sorted by start, put a node in at
// now; ok is false when no window is open or opens within the horizon (nor
// within avoidWithin).
func (pl *MaintenanceWindow) windowState(ws []window.Window, now time.Time) (string, bool) {
	if b, blocked := window.Blocking(ws, now, pl.avoidWithin); blocked {
		if b.Start.After(now) {
			return stateAvoided, true
		}
		return stateOpen, true
	}
	// Score ranks a node lower only when its next window opens before the
	// horizon: at the horizon it scores as a node without a window.
	if until, ok := window.NextStart(ws, now); ok && until < pl.horizon {
		return stateUpcoming, true
	}
	return "", false
}
