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

// subsystem prefixes every metric of the controller.
const subsystem = "nodepoolquota"

var (
	usedGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "used",
		Help:           "What a team's pods bound to a pool's nodes request, per limited resource, in its base unit (cores for cpu, bytes for memory), as of the controller's last sync.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool", "team", "resource"})
	limitGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "limit",
		Help:           "A team's limit in a pool, per resource, in its base unit (cores for cpu, bytes for memory).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool", "team", "resource"})
	heldGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "held_pods",
		Help:           "A team's pods kept gated because the pool has no room for them, as of the controller's last sync.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"pool", "team"})
)

var registerOnce sync.Once

// RegisterMetrics registers the controller's metrics with component-base's
// legacy registry, which the binary's /metrics serves. Call it before Run: a
// child of an unregistered vec counts nothing.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(usedGauge, limitGauge, heldGauge)
	})
}

// series remembers the label values the last sync set, so that a team or
// a pool that goes away leaves no stale series behind.
type series struct {
	resources map[[3]string]bool // pool, team, resource
	teams     map[[2]string]bool // pool, team
}

// export sets the gauges of plan's valid pools and deletes the rest.
func (s *series) export(p *plan) {
	resources, teams := map[[3]string]bool{}, map[[2]string]bool{}
	for _, pl := range p.pools {
		if pl.q == nil {
			continue
		}
		for t := range pl.q.Teams {
			team := &pl.q.Teams[t]
			teams[[2]string{pl.q.Name, team.Name}] = true
			heldGauge.WithLabelValues(pl.q.Name, team.Name).Set(float64(pl.held[t]))
			for i, l := range team.Limits {
				r := string(l.Resource)
				resources[[3]string{pl.q.Name, team.Name, r}] = true
				usedGauge.WithLabelValues(pl.q.Name, team.Name, r).Set(metricValue(l.Resource, pl.used[t][i]))
				limitGauge.WithLabelValues(pl.q.Name, team.Name, r).Set(metricValue(l.Resource, l.Max))
			}
		}
	}
	for k := range s.resources {
		if !resources[k] {
			usedGauge.DeleteLabelValues(k[:]...)
			limitGauge.DeleteLabelValues(k[:]...)
		}
	}
	for k := range s.teams {
		if !teams[k] {
			heldGauge.DeleteLabelValues(k[:]...)
		}
	}
	s.resources, s.teams = resources, teams
}
