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
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// GKEMaintenanceLabel is the node label by which GKE announces a VM's
// upcoming host maintenance: its start, in Unix epoch seconds
// (https://cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events).
const GKEMaintenanceLabel = "cloud.google.com/scheduled-maintenance-time"

// Where says in which map of a node's metadata a source lives.
type Where int

const (
	InAnnotations Where = iota
	InLabels
)

func (w Where) String() string {
	if w == InLabels {
		return "label"
	}
	return "annotation"
}

// Format says how a source's value reads.
type Format int

const (
	// FormatIntervals: RFC 3339 intervals START/END, comma-separated.
	FormatIntervals Format = iota
	// FormatUnixStart: one start in Unix epoch seconds; the window lasts
	// providerWindowDuration.
	FormatUnixStart
)

// Source is one place in a node's metadata that announces maintenance
// windows.
type Source struct {
	// Name names the source in metrics and messages.
	Name   string
	Key    string
	Where  Where
	Format Format
}

// The names of the sources, in metrics and messages.
const (
	SourceAnnotation    = "annotation"
	SourceGKELabel      = "gke-label"
	SourceNodeCondition = "node-condition"
	SourceKarpenter     = "karpenter"
)

// providerSources are the cloud providers' signals read with
// providerSignals. Another provider's key or format is one entry here (and,
// for a new format, a case in cache.parseFormat).
var providerSources = []Source{
	{Name: SourceGKELabel, Key: GKEMaintenanceLabel, Where: InLabels, Format: FormatUnixStart},
}

// Value returns src's value on node, "" when it has none.
func (src *Source) Value(node *v1.Node) string {
	if src.Where == InLabels {
		return node.Labels[src.Key]
	}
	return node.Annotations[src.Key]
}

// maxUnixStart is 9999-12-31T23:59:59Z, the last second RFC 3339 writes,
// past which Unix microseconds would not hold either.
const maxUnixStart = 253402300799

// ParseUnixStart parses a start in Unix epoch seconds, such as GKE's
// "1733083200", into one window of length d. Only digits are allowed: no
// sign, no fraction, no blanks.
func ParseUnixStart(value string, d time.Duration) ([]Window, error) {
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
	return []Window{{Start: start, End: start.Add(d)}}, nil
}

// Sources reads the windows that nodes announce in the places args name:
// the annotation, then the providers' signals unless providerSignals is
// off, the node lifecycle conditions unless nodeConditions is off, and
// Karpenter's NodeClaims once given (SetNodeClaims) unless karpenter is
// off. Its parse cache is safe for parallel use.
type Sources struct {
	list  []Source
	cache *cache
	// conditions reads the node lifecycle conditions; plannedScore makes
	// MaintenancePlanned without a time rank nodes instead of filtering
	// them.
	conditions, plannedScore bool
	// karpenter allows SetNodeClaims; claims is nil until it is called.
	karpenter bool
	claims    NodeClaims
}

// NewSources returns the sources of args (defaulted).
func NewSources(args *config.MaintenanceWindowArgs) *Sources {
	s := &Sources{
		list:         []Source{{Name: SourceAnnotation, Key: args.AnnotationKey, Where: InAnnotations, Format: FormatIntervals}},
		cache:        newCache(args.ProviderWindowDuration.Duration),
		conditions:   args.NodeConditions,
		plannedScore: args.PlannedWithoutTime == config.PlannedScore,
		karpenter:    args.Karpenter,
	}
	if args.ProviderSignals {
		s.list = append(s.list, providerSources...)
	}
	return s
}

// List returns the sources in node metadata, the annotation first. The
// caller must not change it.
func (s *Sources) List() []Source { return s.list }

// ReadsConditions reports whether s reads the node lifecycle conditions,
// so that a change of a node's conditions can end a rejection.
func (s *Sources) ReadsConditions() bool { return s.conditions }

// Carries reports whether node has a value, well-formed or not, in any
// source: a lifecycle condition True counts, and so does a node launched by
// Karpenter once s has NodeClaims.
func (s *Sources) Carries(node *v1.Node) bool {
	for i := range s.list {
		if s.list[i].Value(node) != "" {
			return true
		}
	}
	if s.conditions && hasLifecycleCondition(node) {
		return true
	}
	if s.claims != nil {
		_, ok := node.Labels[KarpenterNodePoolLabel]
		return ok
	}
	return false
}

// Announcing returns the names of the sources that announce something for
// node (a value, well-formed or not; a condition True; a NodeClaim's plan),
// in the order of List, then node-condition, then karpenter; nil for none.
func (s *Sources) Announcing(node *v1.Node) []string {
	var names []string
	for i := range s.list {
		if s.list[i].Value(node) != "" {
			names = append(names, s.list[i].Name)
		}
	}
	if s.conditions && hasLifecycleCondition(node) {
		names = append(names, SourceNodeCondition)
	}
	if c, ok := s.claimFor(node); ok && c.announces() {
		names = append(names, SourceKarpenter)
	}
	return names
}

// Windows returns the maintenance windows that node announces through
// every source, sorted by start. A malformed value has none and is logged
// once. It allocates only when two sources have windows; the result may be
// shared and must not be changed.
func (s *Sources) Windows(logger klog.Logger, node *v1.Node) []Window {
	var ws []Window
	merged := false
	for i := range s.list {
		src := &s.list[i]
		value := src.Value(node)
		if value == "" {
			continue
		}
		got := s.cache.windows(logger, node.Name, *src, value)
		ws, merged = mergeWindows(ws, got, merged)
	}
	ws, _ = s.signalWindows(node, ws, merged)
	return ws
}

// signalWindows adds to ws (owned as mergeWindows says) the windows of
// node's lifecycle conditions and of its NodeClaim.
func (s *Sources) signalWindows(node *v1.Node, ws []Window, owned bool) ([]Window, bool) {
	if s.conditions {
		for i := range node.Status.Conditions {
			c := &node.Status.Conditions[i]
			if c.Status == v1.ConditionTrue {
				ws, owned = mergeWindows(ws, conditionWindows(c.Type, s.plannedScore), owned)
			}
		}
	}
	if c, ok := s.claimFor(node); ok {
		ws, owned = mergeWindows(ws, c.windows(), owned)
	}
	return ws, owned
}

// Parse is Windows without logging, and with the first reason a source
// does not parse; found says whether node has a value in any source or a
// window from a condition or NodeClaim. The metrics' scrape counts such
// nodes.
func (s *Sources) Parse(node *v1.Node) (ws []Window, found bool, err error) {
	merged := false
	for i := range s.list {
		src := &s.list[i]
		value := src.Value(node)
		if value == "" {
			continue
		}
		found = true
		got, perr := s.cache.parse(src.Format, value)
		if perr != nil {
			if err == nil {
				err = perr
			}
			continue
		}
		ws, merged = mergeWindows(ws, got, merged)
	}
	n := len(ws)
	ws, _ = s.signalWindows(node, ws, merged)
	return ws, found || len(ws) > n, err
}

// mergeWindows adds got to ws. The cached slices are shared by every node
// with the same value, so they are never appended to: the first source's
// slice is returned as is, and the second makes a copy (owned says ws is
// one already).
func mergeWindows(ws, got []Window, owned bool) ([]Window, bool) {
	switch {
	case len(got) == 0:
		return ws, owned
	case len(ws) == 0:
		return got, false
	}
	if !owned {
		ws = append(make([]Window, 0, len(ws)+len(got)), ws...)
	}
	ws = append(ws, got...)
	sortByStart(ws)
	return ws, true
}
