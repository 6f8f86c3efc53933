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

package nodelesspods

import (
	"context"
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods/podcount"
)

// subsystem prefixes every metric of the plugin.
const subsystem = "nodelesspods"

var (
	lookupsDesc = metrics.NewDesc(metrics.BuildFQName("", subsystem, "count_lookups_total"),
		"Count lookups by how they were answered: hit (the memo answered), tail (the memo's base plus a scan of pods assumed in a pod-group cycle), scan (the node's pods were scanned).",
		[]string{"profile", "result"}, nil, metrics.ALPHA, "")
	memoNodesDesc = metrics.NewDesc(metrics.BuildFQName("", subsystem, "memo_nodes"),
		"NodeInfos the count memo holds, at scrape time.",
		[]string{"profile"}, nil, metrics.ALPHA, "")
)

var registerOnce sync.Once

// registerMetrics registers the plugin's collector with component-base's
// legacy registry, which kube-scheduler's /metrics serves.
func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.CustomMustRegister(live)
	})
}

// live is the collector of the plugin's metrics. Score adds nothing: the
// count memo counts its tails and scans (package podcount) on the paths that
// write its slots anyway, NormalizeScore counts a cycle's lookups at once,
// and the scrape takes hits as the difference.
var live = &instances{
	members: map[*NodeLessPods]string{},
	retired: map[string]lookups{},
	hits:    map[string]uint64{},
}

// lookups are Count calls: all of them, and the tails and scans among them.
type lookups struct {
	all uint64
	podcount.Recounts
}

func (l *lookups) add(o lookups) {
	l.all += o.all
	l.Tail += o.Tail
	l.Scan += o.Scan
}

// lookupsOf reads pl's lookups. The tails and scans are read after the
// total: a cycle adds to the total only after its Score calls, so the
// difference never counts a lookup as a hit before it is one.
func lookupsOf(pl *NodeLessPods) lookups {
	all := pl.lookups.Load()
	return lookups{all: all, Recounts: pl.counts.Recounts()}
}

// instances holds the running plugin instances by profile. An instance joins
// in New and leaves when its scheduler's context is done; its lookups are
// then kept in retired, so that a profile's counter never goes down when one
// of its schedulers stops (as a counter vec's child would not). retired and
// hits are bounded by the profiles the process has run.
type instances struct {
	metrics.BaseStableCollector

	mu      sync.Mutex
	members map[*NodeLessPods]string
	retired map[string]lookups
	// hits is the last hit count exported per profile. Mid-cycle, a scan
	// is counted before the cycle's lookups are: the difference can then
	// lag, and the export keeps the highest value, so that the counter
	// never goes down and is exact between cycles.
	hits map[string]uint64
}

var _ metrics.StableCollector = &instances{}

// join adds pl under profile until ctx is done.
func (c *instances) join(ctx context.Context, pl *NodeLessPods, profile string) {
	c.mu.Lock()
	c.members[pl] = profile
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		// Under c.mu, as a scrape sums, so that no scrape sees more lookups
		// of pl than retired keeps.
		c.mu.Lock()
		defer c.mu.Unlock()
		retired := c.retired[profile]
		retired.add(lookupsOf(pl))
		c.retired[profile] = retired
		delete(c.members, pl)
	})
}

// DescribeWithStability implements metrics.StableCollector.
func (c *instances) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- lookupsDesc
	ch <- memoNodesDesc
}

// CollectWithStability implements metrics.StableCollector: it sums the
// instances of each profile, so that no two samples have the same labels.
// It holds c.mu throughout, so that an instance is never counted both live
// and retired; each instance's sums take only its own cache's lock.
func (c *instances) CollectWithStability(ch chan<- metrics.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sums := make(map[string]lookups, len(c.retired)+len(c.members))
	memoNodes := map[string]int{}
	for profile, l := range c.retired {
		sums[profile] = l
	}
	for pl, profile := range c.members {
		sum := sums[profile]
		sum.add(lookupsOf(pl))
		sums[profile] = sum
		memoNodes[profile] += pl.counts.Len()
	}
	for profile, l := range sums {
		if recounts := l.Tail + l.Scan; l.all > recounts {
			c.hits[profile] = max(c.hits[profile], l.all-recounts)
		}
		ch <- metrics.NewLazyConstMetric(lookupsDesc, metrics.CounterValue, float64(c.hits[profile]), profile, "hit")
		ch <- metrics.NewLazyConstMetric(lookupsDesc, metrics.CounterValue, float64(l.Tail), profile, "tail")
		ch <- metrics.NewLazyConstMetric(lookupsDesc, metrics.CounterValue, float64(l.Scan), profile, "scan")
	}
	for profile, n := range memoNodes {
		ch <- metrics.NewLazyConstMetric(memoNodesDesc, metrics.GaugeValue, float64(n), profile)
	}
}
