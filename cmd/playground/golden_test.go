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
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from this run")

// goldenRuns are the commands of examples/scenarios/README.md's table, one
// per shipped scenario that places pods.
var goldenRuns = []struct {
	scenario, config, compare string
	// args are more flags; compare may then be empty.
	args []string
	// needs is what the scenario needs of the minor.
	needs *kubeversion.Feature
}{
	{scenario: "tutorial.yaml", config: shippedConfig, compare: defaultProfile},
	{scenario: "weights.yaml", config: scenarios + "leastpods-weight-1-config.yaml", compare: shippedConfig},
	{scenario: "heterogeneous.yaml", config: shippedConfig, compare: scenarios + "relative-capacity-config.yaml"},
	{scenario: "consolidation.yaml", config: "../../manifests/nodelesspods/consolidation-config.yaml", compare: scenarios + "mostpods-config.yaml"},
	{scenario: "placement.yaml", config: scenarios + "placement-config.yaml", compare: defaultProfile},
	{scenario: "maintenance.yaml", config: "../../manifests/maintenancewindow/scheduler-config.yaml", compare: defaultProfile},
	{scenario: "maintenance-signals.yaml", config: "../../manifests/maintenancewindow/scheduler-config.yaml", compare: scenarios + "maintenance-signals-off-config.yaml"},
	{scenario: "maintenance-lookahead.yaml", config: scenarios + "maintenance-lookahead-config.yaml", compare: scenarios + "maintenance-lookahead-off-config.yaml"},
	{scenario: "repack.yaml", config: "../../manifests/nodelesspods/consolidation-config.yaml", compare: defaultProfile},
	{scenario: "rebalance.yaml", config: scenarios + "rebalance-config.yaml", args: []string{"--descheduler", scenarios + "rebalance-descheduler-policy.yaml"}},
	{scenario: "licenses.yaml", config: shippedConfig, compare: defaultProfile, needs: &kubeversion.DRAExtendedResource},
	{scenario: "ondemand-share.yaml", config: scenarios + "ondemand-share-config.yaml", args: []string{"--admission-policies"}},
	{scenario: "team-quotas.yaml", config: "../../manifests/nodepoolquota/scheduler-config.yaml", compare: defaultProfile},
}

// TestGolden runs every shipped scenario as the README's table does and
// compares what it placed with testdata/golden/<scenario>.txt, as far as it
// does not depend on chance (see goldenText). It holds the
// playground's behaviour still while its code moves (go test -run
// TestGolden -update rewrites the files; review the diff).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(scenarios + "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{
		"tutorial-nodes.yaml": true, // nodes only, for --keep
		"karpenter.yaml":      true, // needs --karpenter: TestKarpenter
	}
	for _, g := range goldenRuns {
		covered[g.scenario] = true
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && !strings.Contains(string(data), "KubeSchedulerConfiguration") &&
			!strings.Contains(string(data), "kind: DeschedulerPolicy") && !covered[filepath.Base(f)] {
			t.Errorf("%s has no golden run: add it to goldenRuns", filepath.Base(f))
		}
	}
	for _, g := range goldenRuns {
		t.Run(strings.TrimSuffix(g.scenario, ".yaml"), func(t *testing.T) {
			if g.needs != nil && !kubeversion.Has(*g.needs) {
				t.Skipf("%s", kubeversion.Unavailable(*g.needs).Error())
			}
			args := append([]string{"--scenario", scenarios + g.scenario, "--config", g.config, "--output", "json"}, g.args...)
			if g.compare != "" {
				args = append(args, "--compare", g.compare)
			}
			code, out, _ := runPlayground(t, args...)
			if code != 0 {
				t.Fatalf("exit code %d, want 0", code)
			}
			var runs []report.Run
			if g.compare != "" {
				runs = decodeRuns(t, out)
			} else {
				// One run: its result alone.
				runs = []report.Run{{Config: g.config}}
				if err := json.Unmarshal([]byte(out), &runs[0].Result); err != nil {
					t.Fatalf("decoding %s: %v", out, err)
				}
			}
			got := goldenText(runs, readGoldenNodes(t, scenarios+g.scenario))
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

// goldenNode is a node spec of a scenario: its name, the group of the nodes
// it makes.
type goldenNode struct {
	Name  string `json:"name"`
	Count *int   `json:"count,omitempty"`
}

// readGoldenNodes reads the node specs of a scenario file on its own (its
// nodes, then those its steps add), so that the test does not depend on
// the code it pins.
func readGoldenNodes(t *testing.T, path string) map[string]goldenNode {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Nodes []goldenNode `json:"nodes"`
		Steps []struct {
			AddNodes []goldenNode `json:"addNodes"`
		} `json:"steps"`
	}
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Steps {
		s.Nodes = append(s.Nodes, st.AddNodes...)
	}
	nodes := map[string]goldenNode{}
	for _, n := range s.Nodes {
		if n.Count == nil || *n.Count <= 1 {
			nodes[n.Name] = n
			continue
		}
		for i := 1; i <= *n.Count; i++ {
			nodes[fmt.Sprintf("%s-%d", n.Name, i)] = n
		}
	}
	return nodes
}

// goldenText is what TestGolden compares of runs: per run and object, how
// many pods it has, how many nodes they are on and, but with the default
// profile (whose plugins see the nodes of the shipped scenarios as alike),
// of which node specs (the group a count expands), and why pods are unbound;
// per step, how many pods are on how many nodes, how many wait and how
// many the descheduler evicted (each cycle sees a settled cluster). Not
// which node of a spec, nor how many pods each: where nodes tie on score
// the scheduler breaks the tie at random (the order in which its goroutines
// filtered them, opportunistic batching), so those vary from run to run of
// the same code. internal/playground's
// TestPlayScenarios checks the exact placements the README promises.
// With OnDemandShare, how many nodes of a spec hold pods varies too (which
// slots a scale-down keeps, and where they landed, is chance): its runs
// give the pods per node spec (its capacity class) and the shares, which
// the controller makes exact.
func goldenText(runs []report.Run, nodes map[string]goldenNode) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "config %s\n", filepath.Base(r.Config))
		res := r.Result
		if len(res.Share) > 0 {
			writeShareGolden(&b, res, nodes)
			continue
		}
		fmt.Fprintf(&b, "  %s\n", spreadOver(res.Nodes))
		for _, st := range res.Steps {
			fmt.Fprintf(&b, "  after %s: %s", st.Step, spreadOver(st.Nodes))
			if st.Waiting > 0 {
				fmt.Fprintf(&b, ", %d waiting", st.Waiting)
			}
			if st.Evicted != nil {
				fmt.Fprintf(&b, ", %d evicted", *st.Evicted)
			}
			fmt.Fprintln(&b)
		}
		type objectPods struct {
			pods    int
			nodes   map[string]bool
			specs   map[string]bool
			unbound map[string]int
		}
		perObject := map[string]*objectPods{}
		var objects []string
		for _, p := range res.Pods {
			o := perObject[p.Object]
			if o == nil {
				o = &objectPods{nodes: map[string]bool{}, specs: map[string]bool{}, unbound: map[string]int{}}
				perObject[p.Object] = o
				objects = append(objects, p.Object)
			}
			o.pods++
			if p.Node == "" {
				o.unbound[p.Reason]++
				continue
			}
			o.nodes[p.Node] = true
			o.specs[nodes[p.Node].Name] = true
		}
		for _, obj := range objects {
			o := perObject[obj]
			fmt.Fprintf(&b, "  %s: %d pods on %d nodes", obj, o.pods, len(o.nodes))
			if filepath.Base(r.Config) != filepath.Base(defaultProfile) {
				fmt.Fprintf(&b, " of %s", strings.Join(slices.Sorted(maps.Keys(o.specs)), ", "))
			}
			fmt.Fprintln(&b)
			for _, reason := range slices.Sorted(maps.Keys(o.unbound)) {
				fmt.Fprintf(&b, "    %d unbound: %s\n", o.unbound[reason], reason)
			}
		}
	}
	return b.String()
}

// writeShareGolden is goldenText of a run with OnDemandShare: the pods per
// node spec at the end and after each step, then the shares.
func writeShareGolden(b *strings.Builder, res report.Result, nodes map[string]goldenNode) {
	fmt.Fprintf(b, "  pods per node spec: %s\n", perSpec(res.Nodes, nodes))
	for _, st := range res.Steps {
		fmt.Fprintf(b, "  after %s: %s, %d waiting\n", st.Step, perSpec(st.Nodes, nodes), st.Waiting)
	}
	for _, sh := range res.Share {
		fmt.Fprintf(b, "  on-demand share after %s: %s\n", sh.After, sh)
	}
}

// perSpec is "on-demand 6, spot 14": the pods on the nodes of each spec.
func perSpec(ns []report.NodeResult, nodes map[string]goldenNode) string {
	counts := map[string]int{}
	for _, n := range ns {
		counts[nodes[n.Name].Name] += n.Pods
	}
	var parts []string
	for _, spec := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", spec, counts[spec]))
	}
	return strings.Join(parts, ", ")
}

// spreadOver says how many pods are on how many nodes.
func spreadOver(ns []report.NodeResult) string {
	pods, used := 0, 0
	for _, n := range ns {
		pods += n.Pods
		if n.Pods > 0 {
			used++
		}
	}
	return fmt.Sprintf("%d pods on %d of %d nodes", pods, used, len(ns))
}
