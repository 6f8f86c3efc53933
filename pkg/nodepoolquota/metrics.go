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

package nodepoolquota

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// subsystem prefixes every metric of the plugin.
const subsystem = "nodepoolquota"

var rejections = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      subsystem,
	Name:           "rejections_total",
	Help:           "Scheduling attempts in which the team's limit of the resource in the pool rejected at least one node, once per attempt.",
	StabilityLevel: metrics.ALPHA,
}, []string{"profile", "pool", "team", "resource"})

var registerOnce sync.Once

// registerMetrics registers the plugin's metrics with component-base's
// legacy registry, which kube-scheduler's /metrics serves.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(rejections)
	})
}

// countRejection counts one attempt that limit j of p rejected. The series
// are taken on the first rejection, not up front: pools and teams come and
// go with the quotas, and a series per team of every quota would be kept
// for teams that are never at their limit.
func (pl *NodePoolQuota) countRejection(p *pair, j int) {
	rejections.WithLabelValues(pl.profile, p.q.Name, p.teamQuota().Name, string(p.teamQuota().Limits[j].Resource)).Inc()
}
