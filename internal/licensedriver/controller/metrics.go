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
)

const subsystem = "license_driver"

var (
	seatsGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "seats",
		Help:           "Seats of a license feature's pool by state: total issued, allocated to pods' claims, in use outside the cluster, free for new pods, blocked (unallocated and not offered).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool", "state"})
	sourceReads = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "source_reads_total",
		Help:           "Reads of the license server, by result (success, error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	sourceLastSuccess = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "source_last_success_timestamp_seconds",
		Help:           "When the license server last answered, in seconds since the epoch.",
		StabilityLevel: metrics.ALPHA,
	})
	featureOverLimit = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "feature_over_limit",
		Help:           "1 while the license server reports more seats of the pool's feature than maxSeats: the feature fails closed (no new seat offered).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool"})
	heldTwice = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "devices_held_twice",
		Help:           "Devices of the pool held by two or more claims that do not share them: two schedulers allocated from the pool at once.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool"})
	sourceStale = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "source_stale",
		Help:           "1 while the last reading is older than staleAfter (or there is none), else 0.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

// RegisterMetrics registers the controller's metrics with component-base's
// legacy registry, which the driver's /metrics serves.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(seatsGauge, sourceReads, sourceLastSuccess, sourceStale, featureOverLimit, heldTwice)
	})
}
