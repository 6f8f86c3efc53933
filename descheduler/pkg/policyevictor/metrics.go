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

package policyevictor

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// Why an eviction was refused: the furthest check that some other node
// reached, or that the nodes it reached are less preferred.
const (
	reasonNoOtherNode     = "NoOtherNode"
	reasonPlacementPolicy = "PlacementPolicy"
	reasonWindow          = "MaintenanceWindow"
	reasonNodeFit         = "NodeFit"
	reasonLessPreferred   = "LessPreferred"
	reasonError           = "Error"
)

var (
	refused = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "adminsched",
		Subsystem:      "policyevictor",
		Name:           "refused_total",
		Help:           "Evictions PolicyEvictor refused, by reason.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	registerMetricsOnce sync.Once
)

// registerMetrics adds the metric to the registry the descheduler serves
// its own metrics from.
func registerMetrics() {
	registerMetricsOnce.Do(func() { legacyregistry.MustRegister(refused) })
}

// refuse counts and logs one refusal. The descheduler's plugin handle has
// no event recorder, so no Event is written.
func (e *PolicyEvictor) refuse(pod *v1.Pod, reason, detail string) bool {
	refused.WithLabelValues(reason).Inc()
	e.logger.V(2).Info("Refusing eviction: the pod has no other node to go to", "pod", klog.KObj(pod),
		"node", pod.Spec.NodeName, "reason", reason, "detail", detail)
	return false
}
