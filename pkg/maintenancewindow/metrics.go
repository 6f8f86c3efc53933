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
	"context"
	"sync"

	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// subsystem prefixes every metric of the plugin.
const subsystem = "maintenancewindow"

var (
	retriesPlanned = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "retries_planned_total",
		Help:           "Pods given a retry at the end of the maintenance window that rejected them (new entries of the retry queue).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	retriesFired = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "retries_fired_total",
		Help:           "Pods moved back to the active queue when their maintenance window ended.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	retriesDropped = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "retries_dropped_total",
		Help:           "Retries dropped before they fired: the pod was bound, finished or deleted.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})

	nodesDesc = metrics.NewDesc(metrics.BuildFQName("", subsystem, "nodes"),
		"Nodes by maintenance window state at scrape time and by the source that puts them there: open, avoided (opens within avoidWithin), upcoming (opens within horizon), invalid (the annotation or label does not parse). A node counts once per source, so the sum over sources may exceed the node count.",
		[]string{"profile", "state", "source"}, nil, metrics.ALPHA, "")
	pendingRetriesDesc = metrics.NewDesc(metrics.BuildFQName("", subsystem, "pending_retries"),
		"Pods waiting for a maintenance window to end (the retry queue's length) at scrape time.",
		[]string{"profile"}, nil, metrics.ALPHA, "")
)

// Node window states, the values of the state label.
const (
	stateOpen     = "open"
	stateAvoided  = "avoided"
	stateUpcoming = "upcoming"
	stateInvalid  = "invalid"
)

var states = [...]string{stateOpen, stateAvoided, stateUpcoming, stateInvalid}

// sources are the values of the source label: every source has its
// series, at 0 when it is off, so that the set of series is fixed.
var sources = [...]string{window.SourceAnnotation, window.SourceGKELabel, window.SourceNodeCondition, window.SourceKarpenter}

var registerOnce sync.Once

// registerMetrics registers the plugin's metrics with component-base's legacy
// registry, which kube-scheduler's /metrics serves. It must run before any
// child is taken: a child of an unregistered vec counts nothing.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(retriesPlanned, retriesFired, retriesDropped)
		legacyregistry.CustomMustRegister(live)
	})
}

// profileName is the profile label of the plugin's metrics: the handle's
// profile, or "" without a handle (unit tests that build the plugin alone).
func profileName(h fwk.Handle) string {
	if h == nil {
		return ""
	}
	return h.ProfileName()
}

// retryMetrics are the children of one profile, taken once in New so that
// the retry queue only increments them; taking them also makes the series
// exist at 0 from start-up.
type retryMetrics struct {
	planned, fired, dropped metrics.CounterMetric
}

func newRetryMetrics(profile string) retryMetrics {
	return retryMetrics{
		planned: retriesPlanned.WithLabelValues(profile),
		fired:   retriesFired.WithLabelValues(profile),
		dropped: retriesDropped.WithLabelValues(profile),
	}
}

// live is the collector of the at-scrape gauges over the plugin instances
// whose scheduler runs.
var live = &instances{members: map[*MaintenanceWindow]string{}}

// instances holds the live plugin instances by profile. An instance joins in
// New and leaves when its scheduler's context is done, so the set is bounded
// by the running profiles.
type instances struct {
	metrics.BaseStableCollector

	mu      sync.Mutex
	members map[*MaintenanceWindow]string
}

var _ metrics.StableCollector = &instances{}

// join adds pl under profile until ctx is done.
func (c *instances) join(ctx context.Context, pl *MaintenanceWindow, profile string) {
	c.mu.Lock()
	c.members[pl] = profile
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		delete(c.members, pl)
		c.mu.Unlock()
	})
}

// DescribeWithStability implements metrics.StableCollector.
func (c *instances) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- nodesDesc
	ch <- pendingRetriesDesc
}

// profileSample is what the instances of one profile sum to.
type profileSample struct {
	nodes       map[nodeKey]int
	listsNodes  bool
	pendingPods int
}

// CollectWithStability implements metrics.StableCollector: it sums the
// instances of each profile, so that no two samples have the same labels.
func (c *instances) CollectWithStability(ch chan<- metrics.Metric) {
	c.mu.Lock()
	members := make(map[*MaintenanceWindow]string, len(c.members))
	for pl, profile := range c.members {
		members[pl] = profile
	}
	c.mu.Unlock()
	// Instances are read outside c.mu: listing nodes and taking the retry
	// queue's lock must not hold back a New or a leaving instance.
	byProfile := map[string]*profileSample{}
	for pl, profile := range members {
		s := byProfile[profile]
		if s == nil {
			s = &profileSample{nodes: map[nodeKey]int{}}
			byProfile[profile] = s
		}
		s.pendingPods += pl.pendingRetries()
		if pl.nodes != nil {
			s.listsNodes = true
			pl.countNodeStates(s.nodes)
		}
	}
	for profile, s := range byProfile {
		ch <- metrics.NewLazyConstMetric(pendingRetriesDesc, metrics.GaugeValue, float64(s.pendingPods), profile)
		if !s.listsNodes {
			continue
		}
		for _, source := range sources {
			for _, state := range states {
				if state == stateInvalid && !parsesValues(source) {
					continue
				}
				ch <- metrics.NewLazyConstMetric(nodesDesc, metrics.GaugeValue, float64(s.nodes[nodeKey{state, source}]), profile, state, source)
			}
		}
	}
}

// nodeLister returns the scheduler's node lister, nil when h offers no
// informers (unit tests): then nodes are not counted.
func nodeLister(h fwk.Handle) corelisters.NodeLister {
	if h == nil || h.SharedInformerFactory() == nil {
		return nil
	}
	return h.SharedInformerFactory().Core().V1().Nodes().Lister()
}
