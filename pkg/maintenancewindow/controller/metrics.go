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
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// subsystem prefixes every metric of the controller; the plugin's are
// maintenancewindow_*.
const subsystem = "maintenancewindow_controller"

var (
	nodesTainted = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "nodes_tainted",
		Help:           "Nodes that carry the controller's NoSchedule taint (their window is open), as of their last sync.",
		StabilityLevel: metrics.ALPHA,
	})
	nodesWithCondition = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "nodes_with_condition",
		Help:           "Nodes that carry a condition the controller set, by condition type, as of their last sync.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})
	foreignSkips = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "foreign_owner_skips_total",
		Help:           "Writes the controller left out because another writer owns the taint (our key, another value) or the condition (its type, another reason), by object (taint, condition) and type.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"object", "type"})
	writeErrors = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "write_errors_total",
		Help:           "Node writes that failed, by write (taint: the node, conditions: its status) and reason (conflict: another writer came first, retried; other).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"write", "reason"})
)

var registerOnce sync.Once

// RegisterMetrics registers the controller's metrics with component-base's
// legacy registry, which the binary's /metrics serves. Call it before Run: a
// child of an unregistered vec counts nothing.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(nodesTainted, nodesWithCondition, foreignSkips, writeErrors)
	})
}

// marks is what the gauges count: per node, whether it carries the
// controller's taint and which of its conditions; counts are kept as nodes
// change, so that a sync costs the same on any cluster size.
type marks struct {
	mu     sync.Mutex
	nodes  map[string]nodeMarks
	counts [3]int
}

// nodeMarks: the controller's taint, MaintenancePlanned, MaintenanceInProgress.
type nodeMarks [3]bool

func marksOf(node *v1.Node) nodeMarks {
	var m nodeMarks
	for i := range node.Spec.Taints {
		m[0] = m[0] || ownsTaint(&node.Spec.Taints[i])
	}
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if ownsCondition(c) {
			m[1] = m[1] || c.Type == ConditionMaintenancePlanned
			m[2] = m[2] || c.Type == ConditionMaintenanceInProgress
		}
	}
	return m
}

// set records node as synced (nil: gone) and updates the gauges.
func (m *marks) set(name string, node *v1.Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	before := m.nodes[name]
	var now nodeMarks
	if node != nil {
		now = marksOf(node)
		m.nodes[name] = now
	} else {
		delete(m.nodes, name)
	}
	for i := range now {
		m.counts[i] += b2i(now[i]) - b2i(before[i])
	}
	nodesTainted.Set(float64(m.counts[0]))
	nodesWithCondition.WithLabelValues(ConditionMaintenancePlanned).Set(float64(m.counts[1]))
	nodesWithCondition.WithLabelValues(ConditionMaintenanceInProgress).Set(float64(m.counts[2]))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
