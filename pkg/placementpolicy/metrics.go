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

package placementpolicy

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy/match"
)

// subsystem prefixes every metric of the plugin.
const subsystem = "placementpolicy"

var (
	ruleApplied = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "rule_applied_total",
		Help:           "Scheduling attempts in which the placement rule applied to the pod, once per attempt (pod-group cycles are not counted).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "rule"})
	ruleUnschedulable = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "unschedulable_total",
		Help:           "Scheduling attempts that found no feasible node and in which the Require rule rejected at least one node (pod-group cycles are not counted).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "rule"})
)

var registerOnce sync.Once

// registerMetrics registers the plugin's metrics with component-base's legacy
// registry, which kube-scheduler's /metrics serves. It must run before any
// child is taken: a child of an unregistered vec counts nothing.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(ruleApplied, ruleUnschedulable)
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

// takeCounters gives every rule its children, once, so that the scheduling
// path only increments them, and so that every rule's series exists (at 0)
// from the start: a rate over a series that appears late misses its first
// increments, and a dashboard shows "no data" instead of 0.
func takeCounters(profile string, rules *match.Rules, data []ruleData) {
	for i := range data {
		r := rules.At(i)
		data[i].applied = ruleApplied.WithLabelValues(profile, r.Name())
		if r.Require() {
			data[i].unschedulable = ruleUnschedulable.WithLabelValues(profile, r.Name())
		}
	}
}
