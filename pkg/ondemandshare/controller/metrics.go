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

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// subsystem prefixes every metric of the controller, as the guard plugin's.
const subsystem = "ondemandshare"

var (
	decisions = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "decisions_total",
		Help:           "Pods the controller ungated, by policy and decided class (\"\" for a pod ungated without a decision) and fallback (spot-timeout for an on-demand pod that replaces a spot pod which waited too long).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"policy", "class", "fallback"})
	workloadReplicas = workloadGauge("workload_replicas",
		"Live pods of a workload the controller counts, as of its last sync of the workload.")
	workloadOnDemand = workloadGauge("workload_on_demand_replicas",
		"Live pods of a workload decided on-demand, as of the controller's last sync of the workload.")
	workloadRequired = workloadGauge("workload_required_on_demand_replicas",
		"The policy's minimum on demand for the workload's live pods. Below it for minutes means the decisions did not hold (see doc/monitoring.md).")
)

// workloadGauge is a per-workload gauge: one series per policy, namespace
// and workload, dropped by forgetShare.
func workloadGauge(name, help string) *metrics.GaugeVec {
	return metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           name,
		Help:           help,
		StabilityLevel: metrics.ALPHA,
	}, []string{"policy", "namespace", "workload"})
}

var registerOnce sync.Once

// RegisterMetrics registers the controller's metrics with component-base's
// legacy registry, which the controller's /metrics serves. Call it before
// Run: a child of an unregistered vec counts nothing.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(decisions, workloadReplicas, workloadOnDemand, workloadRequired)
	})
}

// countDecision counts one ungated pod.
func countDecision(d Decision) {
	decisions.WithLabelValues(d.Workload.Policy, string(d.Class), d.Fallback).Inc()
}

// workloadName is the workload label: kind/name, as "Deployment/web".
func workloadName(key Key) string { return key.Kind + "/" + key.Name }

// recordShare sets the workload's gauges from its members as the sync saw
// them in the cache: live pods, and those whose class label says
// on-demand. Decisions the sync writes show in the next sync, which their
// pods' updates trigger.
func recordShare(key Key, required func(int32) int32, members []member) {
	live, onDemand := 0, 0
	for _, m := range members {
		if !isActive(m.pod) {
			continue
		}
		live++
		if m.pod.Labels[share.ClassLabel] == string(share.OnDemand) {
			onDemand++
		}
	}
	labels := []string{key.Policy, key.Namespace, workloadName(key)}
	workloadReplicas.WithLabelValues(labels...).Set(float64(live))
	workloadOnDemand.WithLabelValues(labels...).Set(float64(onDemand))
	workloadRequired.WithLabelValues(labels...).Set(float64(required(int32(live))))
}

// forgetShare drops a workload's gauges once it has no pods left, so that
// series of deleted workloads do not pile up.
func forgetShare(key Key) {
	labels := []string{key.Policy, key.Namespace, workloadName(key)}
	workloadReplicas.DeleteLabelValues(labels...)
	workloadOnDemand.DeleteLabelValues(labels...)
	workloadRequired.DeleteLabelValues(labels...)
}
