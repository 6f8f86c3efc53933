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

package autoscaler

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
)

// The workload of TestConsolidationNodesSaved. c-2x nodes allocate 1900m
// (2 CPUs less the KWOK provider's 100m kube-reserved), so 3 pods of 600m
// fill one: 12 web pods need 4 nodes, and every placement of them is the
// same, 3 per node, whatever the profile.
const (
	podCPU            = "600m"
	webPeak           = 12
	webLow            = 2 // 10 pods deleted: at least 2 of the 4 nodes are empty
	secondWave        = 4 // fits in the 10 free slots
	smallInstanceType = "c-2x"
)

// consolidationWindow is the fixed window, from the scale-up, over which
// node-seconds are integrated, and at whose end nodes are counted: the
// same in every run of a policy. It covers two Empty consolidations one
// after the other (the 10% budget of 4 nodes allows one at a time; each
// takes consolidateAfter 5 s, up to 10 s until Karpenter's disruption loop
// looks, 15 s validation and 5 s minimum drain: at most 35 s, then 30 s;
// measured 32.8-39.5 s and 57.8-64.5 s after the scale-up).
var consolidationWindow = map[string]time.Duration{
	karpenter.WhenEmpty:                80 * time.Second,
	karpenter.WhenEmptyOrUnderutilized: 150 * time.Second,
}

// TestConsolidationNodesSaved answers an operator's question: next to
// Karpenter's consolidation, does the consolidating profile
// (manifests/nodelesspods/consolidation-config.yaml, as shipped) end on
// fewer nodes, and at what disruption, than the default profile?
//
// Each run starts from an empty cluster, with one NodePool of c-2x
// on-demand nodes in us-east-1, Karpenter's default budget (10% of nodes)
// and consolidateAfter 5 s. Deployment web scales to 12 pods (Karpenter
// adds 4 nodes, filled 3 each by any profile), then down to 2. Which 10
// pods go is the ReplicaSet controller's choice, not the scheduler's: it
// deletes first the pods on the nodes holding most of its pods, which are
// all alike here, then the most recently Ready and, within the same
// logarithmic age bucket, by UID, so at random; whatever it picks, 2 pods
// leave at least 2 nodes empty. Then a second Deployment of 4 pods
// arrives, before Karpenter can remove an empty node (at least 20 s).
// Where the scheduler puts those 4 pods decides which nodes stay empty:
// the default profile (LeastAllocated, spreading) prefers the empty nodes,
// the consolidating one fills the busiest node first, which leaves 2
// nodes empty (6 pods, 3 per node).
//
// WhenEmpty is the policy where only the scheduler empties nodes (Karpenter
// evicts nothing); WhenEmptyOrUnderutilized (Karpenter also moves pods)
// runs with AUTOSCALER_LONG=1: 2 x 150 s more.
func TestConsolidationNodesSaved(t *testing.T) {
	policies := []string{karpenter.WhenEmpty}
	if os.Getenv("AUTOSCALER_LONG") != "" {
		policies = append(policies, karpenter.WhenEmptyOrUnderutilized)
	} else {
		t.Logf("%s only; set AUTOSCALER_LONG=1 for %s too", karpenter.WhenEmpty, karpenter.WhenEmptyOrUnderutilized)
	}
	profiles := []struct {
		name   string
		config func(t *testing.T) (*configv1.KubeSchedulerConfiguration, string)
	}{
		{name: "default", config: func(*testing.T) (*configv1.KubeSchedulerConfiguration, string) {
			return defaultProfileConfig(), schedulerName
		}},
		{name: "consolidating", config: shippedConsolidationConfig},
	}
	for _, policy := range policies {
		t.Run(policy, func(t *testing.T) {
			results := map[string]consolidationResult{}
			for _, p := range profiles {
				t.Run(p.name, func(t *testing.T) {
					cfg, scheduler := p.config(t)
					results[p.name] = runConsolidationWorkload(t, policy, cfg, scheduler)
				})
			}
			def, okDef := results["default"]
			cons, okCons := results["consolidating"]
			if !okDef || !okCons {
				t.Fatal("a run failed: no comparison")
			}
			t.Logf("%s, window %s: %-13s %5s %12s %7s %7s %7s %14s %s", policy, consolidationWindow[policy],
				"profile", "nodes", "node-seconds", "claims+", "claims-", "evicted", "max disrupting", "reasons")
			for _, name := range []string{"default", "consolidating"} {
				r := results[name]
				t.Logf("%s, window %s: %-13s %5d %12.1f %7d %7d %7d %14d %v", policy, consolidationWindow[policy],
					name, r.NodesAtEnd, r.NodeSeconds, r.ClaimsCreated, r.ClaimsRemoved, r.Evicted, r.MaxDisrupting, r.Reasons)
			}
			for _, name := range []string{"default", "consolidating"} {
				if r := results[name]; r.OverBudget > 0 {
					t.Errorf("%s: more NodeClaims disrupted at once than the 10%% budget allows in %d samples (at most %d at once)", name, r.OverBudget, r.MaxDisrupting)
				}
			}
			if policy == karpenter.WhenEmpty {
				for _, name := range []string{"default", "consolidating"} {
					if r := results[name]; r.Evicted != 0 {
						t.Errorf("%s: %d pods evicted under WhenEmpty, want 0", name, r.Evicted)
					}
				}
				if cons.NodesAtEnd >= def.NodesAtEnd {
					t.Errorf("nodes at the end of the window: consolidating %d, default %d; want fewer with the consolidating profile", cons.NodesAtEnd, def.NodesAtEnd)
				}
				if cons.NodeSeconds >= def.NodeSeconds {
					t.Errorf("node-seconds: consolidating %.1f, default %.1f; want fewer with the consolidating profile", cons.NodeSeconds, def.NodeSeconds)
				}
				return
			}
			// Karpenter also moves pods: it may bring the default profile's
			// nodes down too, at the cost of evictions.
			if cons.NodesAtEnd > def.NodesAtEnd {
				t.Errorf("nodes at the end of the window: consolidating %d, default %d; want no more with the consolidating profile", cons.NodesAtEnd, def.NodesAtEnd)
			}
			if cons.Evicted > def.Evicted {
				t.Errorf("pods evicted: consolidating %d, default %d; want no more with the consolidating profile", cons.Evicted, def.Evicted)
			}
		})
	}
}

// runConsolidationWorkload runs the workload once, on an empty cluster,
// with cfg's scheduler (whose pods name scheduler) and a NodePool of
// policy, and returns what it cost over consolidationWindow[policy].
func runConsolidationWorkload(t *testing.T, policy string, cfg *configv1.KubeSchedulerConfiguration, scheduler string) consolidationResult {
	tc := newTestContext(t)
	np := karpenter.RegionNodePool("us-east-1")
	np.Name = "small"
	np.Requirements = append(np.Requirements[:1],
		v1.NodeSelectorRequirement{Key: karpenter.CapacityTypeLabel, Operator: v1.NodeSelectorOpIn, Values: []string{karpenter.CapacityOnDemand}},
		v1.NodeSelectorRequirement{Key: v1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{smallInstanceType}})
	np.ConsolidationPolicy = policy
	np.ConsolidateAfter = 5 * time.Second
	budgets := tc.createPoolWithDefaultBudget(np)
	if got := fmt.Sprint(budgets); got != "[map[nodes:10%]]" {
		t.Fatalf("NodePool budgets %s, want Karpenter's default [map[nodes:10%%]]", got)
	}
	tc.startScheduler(cfg)

	rec := tc.startNodeRecorder()
	start := time.Now()
	end := start.Add(consolidationWindow[policy])
	stopped := false
	defer func() {
		if !stopped {
			_ = rec.stop()
		}
	}()

	tc.createWorkload(tc.newWorkload("web", scheduler, podCPU, webPeak))
	tc.waitForWorkload("web", webPeak)
	t.Logf("%s: %d web pods on %s", time.Since(start).Round(100*time.Millisecond), webPeak, podsPerNode(tc.nodes(), tc.namespacePods()))

	tc.scaleWorkload("web", webLow)
	tc.waitForWorkload("web", webLow)
	t.Logf("%s: scaled down to %d: %s", time.Since(start).Round(100*time.Millisecond), webLow, podsPerNode(tc.nodes(), tc.namespacePods()))

	tc.createWorkload(tc.newWorkload("second", scheduler, podCPU, secondWave))
	tc.waitForWorkload("second", secondWave)
	t.Logf("%s: %d pods of the second Deployment placed: %s", time.Since(start).Round(100*time.Millisecond), secondWave, podsPerNode(tc.nodes(), tc.namespacePods()))

	tc.poll("the end of the window", time.Until(end)+time.Minute, func(context.Context) (bool, error) {
		return !time.Now().Before(end), nil
	})
	t.Logf("%s: end of the window: %s", time.Since(start).Round(100*time.Millisecond), podsPerNode(tc.nodes(), tc.namespacePods()))
	stopped = true
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Ready nodes over time (from the scale-up):%s", rec.nodeChanges(start))
	return rec.summarize(start, end)
}

// namespacePods lists the test's pods.
func (tc *testContext) namespacePods() []v1.Pod {
	tc.t.Helper()
	list, err := client.CoreV1().Pods(tc.ns).List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatalf("listing pods: %v", err)
	}
	return list.Items
}

// podsPerNode is "node: app=n ..." for every node, busiest first, for the
// test's log.
func podsPerNode(nodes []v1.Node, pods []v1.Pod) string {
	counts := map[string]map[string]int{}
	for _, n := range nodes {
		counts[n.Name] = map[string]int{}
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			if counts[p.Spec.NodeName] == nil {
				counts[p.Spec.NodeName] = map[string]int{}
			}
			counts[p.Spec.NodeName][p.Labels["app"]]++
		}
	}
	total := func(name string) int {
		n := 0
		for _, c := range counts[name] {
			n += c
		}
		return n
	}
	names := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if d := total(b) - total(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, name := range names {
		var apps []string
		for _, app := range slices.Sorted(maps.Keys(counts[name])) {
			apps = append(apps, fmt.Sprintf("%s=%d", app, counts[name][app]))
		}
		out = append(out, fmt.Sprintf("%s[%s]", name, strings.Join(apps, " ")))
	}
	return fmt.Sprintf("%d nodes: %s", len(nodes), strings.Join(out, " "))
}
