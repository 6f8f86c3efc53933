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

package playground

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

const (
	lookaheadConfig    = scenarios + "maintenance-lookahead-config.yaml"
	lookaheadOffConfig = scenarios + "maintenance-lookahead-off-config.yaml"
	// windowOpensReason starts MaintenanceWindow's rejection of a node
	// whose window has not opened yet.
	windowOpensReason = "node's maintenance window opens at "
)

// lookaheadGroup is the node spec of maintenance-lookahead.yaml that made a
// node: which of steady-1 and steady-2 a pod lands on is a tie.
var lookaheadGroup = map[string]string{"batch-window": "batch-window", "steady-1": "steady", "steady-2": "steady"}

// lookaheadObject is what checkMaintenanceLookahead compares of an
// object's pods, from their placement and their last attempt's
// explanation; node specs are named as in lookaheadGroup.
type lookaheadObject struct {
	Pods int
	// On are the node specs the pods are bound to.
	On []string
	// FilteredOpening are the nodes MaintenanceWindow rejected because
	// their window opens soon.
	FilteredOpening []string
	// Preferred are the node specs of the candidates to which
	// MaintenanceWindow gave its highest normalized score.
	Preferred []string
}

// summarizeLookahead sums up each object's pods of r.
func summarizeLookahead(t *testing.T, r report.Result) map[string]lookaheadObject {
	t.Helper()
	type sets struct {
		pods                    int
		on, filtered, preferred map[string]bool
	}
	perObject := map[string]*sets{}
	for _, p := range r.Pods {
		s := perObject[p.Object]
		if s == nil {
			s = &sets{on: map[string]bool{}, filtered: map[string]bool{}, preferred: map[string]bool{}}
			perObject[p.Object] = s
		}
		s.pods++
		if p.Node == "" {
			t.Errorf("pod %s/%s not scheduled: %s", p.Namespace, p.Name, p.Reason)
		} else {
			s.on[lookaheadGroup[p.Node]] = true
		}
		if p.Explain == nil {
			t.Errorf("pod %s/%s has no explanation", p.Namespace, p.Name)
			continue
		}
		for _, f := range p.Explain.Filtered {
			if f.Plugin == "MaintenanceWindow" && strings.HasPrefix(f.Reason, windowOpensReason) {
				for _, n := range f.Nodes {
					s.filtered[n] = true
				}
			}
		}
		best := int64(-1)
		var bestNodes []string
		for _, c := range p.Explain.Candidates {
			for _, sc := range c.Scores {
				if sc.Plugin != "MaintenanceWindow" {
					continue
				}
				if sc.Normalized > best {
					best, bestNodes = sc.Normalized, nil
				}
				if sc.Normalized == best {
					bestNodes = append(bestNodes, c.Node)
				}
			}
		}
		for _, n := range bestNodes {
			s.preferred[lookaheadGroup[n]] = true
		}
	}
	sorted := func(m map[string]bool) []string {
		if len(m) == 0 {
			return nil
		}
		return slices.Sorted(maps.Keys(m))
	}
	got := map[string]lookaheadObject{}
	for obj, s := range perObject {
		got[obj] = lookaheadObject{Pods: s.pods, On: sorted(s.on), FilteredOpening: sorted(s.filtered), Preferred: sorted(s.preferred)}
	}
	return got
}

// checkMaintenanceLookahead: examples/scenarios/maintenance-lookahead.yaml
// with --explain, as its header shows. With runtimeAware, the Job "report",
// whose pods end within 20 minutes (activeDeadlineSeconds), runs on the node
// whose window opens in 1 hour and MaintenanceWindow scores that node
// highest for it; the 3-hour "backfill" and the Deployment "web" are
// filtered off it ("node's maintenance window opens at"). With
// runtimeAware: false, every pod is filtered off it.
func checkMaintenanceLookahead(t *testing.T, runs []report.Run, _ string) {
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	avoided := lookaheadObject{On: []string{"steady"}, FilteredOpening: []string{"batch-window"}, Preferred: []string{"steady"}}
	withPods := func(o lookaheadObject, n int) lookaheadObject { o.Pods = n; return o }
	wants := []struct {
		config string
		want   map[string]lookaheadObject
	}{
		{lookaheadConfig, map[string]lookaheadObject{
			"Job/report":     {Pods: 2, On: []string{"batch-window"}, Preferred: []string{"batch-window"}},
			"Job/backfill":   withPods(avoided, 1),
			"Deployment/web": withPods(avoided, 4),
		}},
		{lookaheadOffConfig, map[string]lookaheadObject{
			"Job/report":     withPods(avoided, 2),
			"Job/backfill":   withPods(avoided, 1),
			"Deployment/web": withPods(avoided, 4),
		}},
	}
	for i, w := range wants {
		if runs[i].Config != w.config {
			t.Errorf("run %d is of %s, want %s", i+1, runs[i].Config, w.config)
		}
		if diff := cmp.Diff(w.want, summarizeLookahead(t, runs[i].Result)); diff != "" {
			t.Errorf("%s: pods per object (-want +got):\n%s", w.config, diff)
		}
	}
}
