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

package descheduler

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

const (
	// residencyReplicas pods fill the 3 EU nodes of residencyCapacity
	// pods; the 3 US nodes stay empty.
	residencyReplicas = 24
	residencyCapacity = 8
	// residencyCycles is how long each half of the test watches the
	// descheduler.
	residencyCycles = 4
)

// TestResidency reproduces the eviction loop of KEP-47 §5 ("Where the
// residency loop comes from") and checks that PolicyEvictor ends it: a
// Require rule holds the Deployment in zone eu; LowNodeUtilization sees
// full EU nodes and empty US ones. With DefaultEvictor's nodeFit alone the
// pods are evicted because they fit a US node, and our scheduler puts
// their replacements back in the EU, cycle after cycle. With PolicyEvictor
// reading the scheduler's own config, no other node admits them and
// nothing is evicted.
func TestResidency(t *testing.T) {
	tc := newTestContext(t)
	rule := v1config.PlacementRule{
		Name:       "eu-data-residency",
		Namespaces: []string{tc.ns},
		NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: zoneLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"},
		}}},
		Action: v1config.PlacementRequire,
	}
	schedulerConfig := tc.startScheduler(&configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(0, "PlacementPolicy")},
		PluginConfig:  []configv1.PluginConfig{testconfig.Args("PlacementPolicy", &v1config.PlacementPolicyArgs{Rules: []v1config.PlacementRule{rule}})},
	}}})
	eu := tc.createNodes("eu", 3, residencyCapacity, map[string]string{zoneLabel: "eu"})
	us := tc.createNodes("us", 3, residencyCapacity, map[string]string{zoneLabel: "us"})
	tc.createDeployment("payments", residencyReplicas)
	watch := tc.watchEvictions()
	lowNodes := lowNodeUtilization(5)

	// Without our evictor: the loop.
	d := tc.startDescheduler(policy(lowNodes, map[string]any{"nodeFit": true}, nil))
	perCycle := d.observe(residencyCycles)
	d.stop()
	tc.waitSettled(residencyReplicas)
	counts, _, err := tc.podsPerNode(tc.ctx)
	if err != nil {
		t.Fatal(err)
	}
	loop := watch.pods()
	evicting := evictingCycles(perCycle)
	t.Logf("DefaultEvictor (nodeFit) alone: %d evictions (%d distinct pods) in %d of %d cycles, per cycle %v; pods per node after: %v",
		total(perCycle), len(loop), evicting, residencyCycles, perCycle, counts)
	if len(loop) < 2 || evicting < 2 {
		t.Errorf("without PolicyEvictor, %d pods were evicted in %d cycles: want the loop, the workload evicted in 2 cycles or more", len(loop), evicting)
	}
	if inUS := counts[us[0]] + counts[us[1]] + counts[us[2]]; inUS != 0 {
		t.Errorf("%d pods run in the US: the rule should have brought every replacement back to the EU (%v)", inUS, counts)
	}

	// With PolicyEvictor at filter and preevictionfilter, reading the file
	// the scheduler runs: the same cycles evict nothing.
	d = tc.startDescheduler(policy(lowNodes, map[string]any{"nodeFit": true}, map[string]any{
		"schedulerConfig": schedulerConfig,
		"schedulerName":   schedulerName,
	}))
	perCycle = d.observe(residencyCycles)
	var again []string
	for uid, e := range watch.pods() {
		if _, ok := loop[uid]; !ok {
			again = append(again, e.name+" on "+e.node)
		}
	}
	slices.Sort(again)
	if len(again) > 5 {
		again = append(again[:5], "...")
	}
	c, err := d.scrape()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("with PolicyEvictor: %d evictions over %d cycles, per cycle %v, %d refusals (EU nodes %v)",
		total(perCycle), residencyCycles, perCycle, c.refused, eu)
	// Zero evictions prove nothing unless the evictor was asked.
	if c.refused == 0 {
		t.Errorf("PolicyEvictor refused nothing (adminsched_policyevictor_refused_total is 0): the strategy never asked it")
	}
	if total(perCycle) != 0 || len(again) != 0 {
		t.Errorf("with PolicyEvictor the descheduler evicted %d pods (per cycle %v): %v; no node but the EU ones, all full, admits them",
			total(perCycle), perCycle, again)
	}
}
