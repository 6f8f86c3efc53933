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

package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adminsched/scheduler-plugins/internal/playground"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from this run")

// goldenRuns are the commands of examples/scenarios/README.md's table, one
// per shipped scenario that places pods.
var goldenRuns = []struct {
	scenario, config, compare string
	// symmetric: the scenario's nodes are alike, so which one gets a tied
	// pod is chosen at random (the tutorial's first pod ties on all three
	// nodes); only the sorted counts per node are kept.
	symmetric bool
}{
	{scenario: "tutorial.yaml", config: shippedConfig, compare: defaultProfile, symmetric: true},
	{scenario: "weights.yaml", config: scenarios + "leastpods-weight-1-config.yaml", compare: shippedConfig},
	{scenario: "heterogeneous.yaml", config: shippedConfig, compare: scenarios + "relative-capacity-config.yaml"},
	{scenario: "consolidation.yaml", config: "../../manifests/nodelesspods/consolidation-config.yaml", compare: scenarios + "mostpods-config.yaml"},
	{scenario: "placement.yaml", config: scenarios + "placement-config.yaml", compare: defaultProfile},
	{scenario: "maintenance.yaml", config: "../../manifests/maintenancewindow/scheduler-config.yaml", compare: defaultProfile},
	{scenario: "rebalance.yaml", config: "../../manifests/nodelesspods/consolidation-config.yaml", compare: defaultProfile},
}

// TestGolden runs every shipped scenario as the README's table does and
// compares what it placed with testdata/golden/<scenario>.txt: per run, the
// pods per node, where each object's pods went (a controller names its pods
// at random, so they are counted per object and node) with the reasons of
// the unbound ones, and the pods per node after each step. It holds the
// playground's behaviour still while its code moves (go test -run
// TestGolden -update rewrites the files; review the diff).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(scenarios + "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{"tutorial-nodes.yaml": true} // nodes only, for --keep
	for _, g := range goldenRuns {
		covered[g.scenario] = true
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && !strings.Contains(string(data), "KubeSchedulerConfiguration") && !covered[filepath.Base(f)] {
			t.Errorf("%s has no golden run: add it to goldenRuns", filepath.Base(f))
		}
	}
	for _, g := range goldenRuns {
		t.Run(strings.TrimSuffix(g.scenario, ".yaml"), func(t *testing.T) {
			code, out, _ := runPlayground(t, "--scenario", scenarios+g.scenario, "--config", g.config, "--compare", g.compare, "--output", "json")
			if code != 0 {
				t.Fatalf("exit code %d, want 0", code)
			}
			got := goldenText(decodeRuns(t, out), g.symmetric)
			path := filepath.Join("testdata", "golden", strings.TrimSuffix(g.scenario, ".yaml")+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("placements differ from %s:\n--- want\n%s\n--- got\n%s", path, want, got)
			}
		})
	}
}

// goldenText is what TestGolden compares of runs.
func goldenText(runs []playground.Run, symmetric bool) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "config %s\n", filepath.Base(r.Config))
		res := r.Result
		if symmetric {
			fmt.Fprintf(&b, "  pods per node, sorted: %s\n", sortedCounts(res.Nodes))
			for _, st := range res.Steps {
				fmt.Fprintf(&b, "  after %s: %s\n", st.Step, sortedCounts(st.Nodes))
			}
		} else {
			fmt.Fprintf(&b, "  pods per node: %s\n", counts(res.Nodes))
			for _, st := range res.Steps {
				fmt.Fprintf(&b, "  after %s: %s\n", st.Step, counts(st.Nodes))
			}
		}
		perObject := map[string]map[string]int{}
		var objects []string
		for _, p := range res.Pods {
			obj := p.Object
			if perObject[obj] == nil {
				perObject[obj] = map[string]int{}
				objects = append(objects, obj)
			}
			where := p.Node
			switch {
			case where == "":
				where = "<none>: " + p.Reason
			case symmetric:
				where = "bound"
			}
			perObject[obj][where]++
		}
		for _, obj := range objects {
			var parts []string
			for _, where := range slices.Sorted(maps.Keys(perObject[obj])) {
				parts = append(parts, fmt.Sprintf("%s x%d", where, perObject[obj][where]))
			}
			fmt.Fprintf(&b, "  %s: %s\n", obj, strings.Join(parts, ", "))
		}
	}
	return b.String()
}

func counts(nodes []playground.NodeResult) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%s=%d", n.Name, n.Pods)
	}
	return strings.Join(parts, " ")
}

func sortedCounts(nodes []playground.NodeResult) string {
	c := make([]int, len(nodes))
	for i, n := range nodes {
		c[i] = n.Pods
	}
	slices.Sort(c)
	slices.Reverse(c)
	return fmt.Sprint(c)
}
