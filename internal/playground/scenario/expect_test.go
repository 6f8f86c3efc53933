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

package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// expectBase is a scenario with two nodes and a Deployment, for the
// assertions below.
const expectBase = `nodes: [{name: eu, count: 2, labels: {region: eu}}]
objects:
  - {kind: Deployment, metadata: {name: web, namespace: shop}, spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
`

// TestDecodeExpect: assertions are decoded strictly and checked with the
// rest of the scenario, every error naming its field path.
func TestDecodeExpect(t *testing.T) {
	tests := []struct {
		name   string
		expect string
		// want are the lines of the error; none means valid.
		want []string
	}{
		{
			name: "the issue's shape",
			expect: `
  - name: shop stays in the EU
    pods: {namespace: shop, matchLabels: {app: web}}
    nodes: {matchLabels: {region: eu}}
  - pods: {namespace: shop}
    unschedulable: {plugin: PlacementPolicy, rule: eu-only}
  - maxPodsPerNode: 12
  - {maxSpread: 0, nodes: {names: [eu-1, eu-2]}}
  - {maxNodes: 1, pods: {namespace: shop}}
  - {minOnNodes: {percent: 30, count: 2}, nodes: {matchLabels: {capacity: on-demand}}}
  - {samePlacementsAs: {config: other.yaml}, pods: {object: {kind: Deployment, name: web}, namespace: shop}}
  - pods: {matchExpressions: [{key: app, operator: In, values: [web]}]}
    unschedulable: {}`,
		},
		{
			name:   "unknown field",
			expect: "\n  - {maxPodsPerNod: 12}",
			want:   []string{`s.yaml: unknown field "expect[0].maxPodsPerNod"; did you mean "expect[0].maxPodsPerNode"?`},
		},
		{
			name:   "unknown field of unschedulable",
			expect: "\n  - {unschedulable: {plugins: PlacementPolicy}}",
			want:   []string{`s.yaml: unknown field "expect[0].unschedulable.plugins"; did you mean "expect[0].unschedulable.plugin"?`},
		},
		{
			name:   "no check",
			expect: "\n  - {name: nothing, pods: {namespace: shop}}",
			want:   []string{"s.yaml: expect[0]: Required value: an assertion needs a check: nodes (alone), unschedulable, maxPodsPerNode, maxNodes, maxSpread, minOnNodes or samePlacementsAs"},
		},
		{
			name:   "two checks",
			expect: "\n  - {maxPodsPerNode: 1, maxSpread: 1}",
			want:   []string{`s.yaml: expect[0]: Invalid value: "maxPodsPerNode, maxSpread": an assertion has one check: make one assertion per check`},
		},
		{
			name:   "negative counts",
			expect: "\n  - {maxPodsPerNode: -1}\n  - {maxSpread: -2}\n  - {maxNodes: -3}",
			want: []string{
				"s.yaml: expect[0].maxPodsPerNode: Invalid value: -1: must not be negative",
				"s.yaml: expect[1].maxSpread: Invalid value: -2: must not be negative",
				"s.yaml: expect[2].maxNodes: Invalid value: -3: must not be negative",
			},
		},
		{
			name:   "minOnNodes without nodes, a bound or a count",
			expect: "\n  - {minOnNodes: {percent: 30}}\n  - {minOnNodes: {}, nodes: {names: [eu-1]}}\n  - {minOnNodes: {percent: 130, count: -1}, nodes: {names: [eu-1]}}",
			want: []string{
				"s.yaml: expect[0].nodes: Required value: minOnNodes counts the selected pods on these nodes",
				"s.yaml: expect[1].minOnNodes: Required value: count, percent or both (the larger wins)",
				"s.yaml: expect[2].minOnNodes.count: Invalid value: -1: must not be negative",
				"s.yaml: expect[2].minOnNodes.percent: Invalid value: 130: must be in the range 0-100",
			},
		},
		{
			name:   "afterStep: 0 to the number of steps, not with samePlacementsAs",
			expect: "\n  - {nodes: {names: [eu-1]}, afterStep: 0}\n  - {nodes: {names: [eu-1]}, afterStep: 1}\nsteps: [{wait: 1s}]",
		},
		{
			name: "afterStep out of range, or with samePlacementsAs",
			expect: "\n  - {nodes: {names: [eu-1]}, afterStep: 2}\n  - {nodes: {names: [eu-1]}, afterStep: -1}" +
				"\n  - {samePlacementsAs: {config: other.yaml}, afterStep: 1}\nsteps: [{wait: 1s}]",
			want: []string{
				"s.yaml: expect[0].afterStep: Invalid value: 2: must be between 0 (once the objects settled) and the number of steps, 1",
				"s.yaml: expect[1].afterStep: Invalid value: -1: must be between 0 (once the objects settled) and the number of steps, 1",
				"s.yaml: expect[2].afterStep: Forbidden: samePlacementsAs compares the placements at the end",
			},
		},
		{
			name:   "a label selector that does not parse",
			expect: "\n  - {pods: {matchLabels: {'a b': c}}, maxPodsPerNode: 1}\n  - {nodes: {matchExpressions: [{key: region, operator: Near}]}}",
			want: []string{
				`s.yaml: expect[0].pods.matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`s.yaml: expect[1].nodes.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
			},
		},
		{
			name:   "unknown node and object",
			expect: "\n  - {nodes: {names: [eu-3]}}\n  - {pods: {object: {kind: Deployment, name: web}}, maxSpread: 1}\n  - {pods: {object: {name: web}}, maxSpread: 1}",
			want: []string{
				`s.yaml: expect[0].nodes.names[0]: Not found: "eu-3"`,
				`s.yaml: expect[1].pods.object.name: Not found: "Deployment default/web is not an object of the scenario": Deployment shop/web is: set pods.namespace: shop`,
				`s.yaml: expect[2].pods.object.kind: Required value: the kind of an object of the scenario`,
			},
		},
		{
			name: "a namespace of no object, before the run",
			expect: "\n  - {pods: {namespace: shpo}, maxSpread: 1}\n  - {pods: {namespace: payments}, maxSpread: 1}" +
				"\n  - {pods: {namespace: shoop, object: {kind: Deployment, name: web}}, maxSpread: 1}" +
				"\n  - {pods: {namespace: shop, object: {kind: Deployment, name: webb}}, maxSpread: 1}",
			want: []string{
				`s.yaml: expect[0].pods.namespace: Not found: "shpo": no object of the scenario is in this namespace; did you mean "shop"?`,
				`s.yaml: expect[1].pods.namespace: Not found: "payments": no object of the scenario is in this namespace (the scenario's: shop)`,
				`s.yaml: expect[2].pods.namespace: Not found: "shoop": no object of the scenario is in this namespace; did you mean "shop"?`,
				`s.yaml: expect[3].pods.object.name: Not found: "Deployment shop/webb is not an object of the scenario": did you mean "web"?`,
			},
		},
		{
			name:   "bad namespace, nodes with unschedulable, samePlacementsAs without config",
			expect: "\n  - {pods: {namespace: Shop}, unschedulable: {}}\n  - {nodes: {names: [eu-1]}, unschedulable: {plugin: X}}\n  - {samePlacementsAs: {}}",
			want: []string{
				`s.yaml: expect[0].pods.namespace: Invalid value: "Shop": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				"s.yaml: expect[1].nodes: Forbidden: an unschedulable pod is on no node: select pods only",
				"s.yaml: expect[2].samePlacementsAs.config: Required value: the KubeSchedulerConfiguration file to run the scenario again with",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePlan("s.yaml", []byte(expectBase+"expect:"+tc.expect+"\n"), nil)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeExpectLimits: a config needs expect, and expect is capped.
func TestDecodeExpectLimits(t *testing.T) {
	many := "expect:\n" + strings.Repeat("  - {maxSpread: 1}\n", MaxAssertions+1)
	tests := []struct {
		name, data string
		want       []string
	}{
		{name: "config without expect", data: expectBase + "config: c.yaml\n", want: []string{"s.yaml: config: Forbidden: config is the scheduler config of `playground test`: a scenario that has it needs expect"}},
		{name: "at the limit", data: expectBase + "expect:\n" + strings.Repeat("  - {maxSpread: 1}\n", MaxAssertions)},
		{name: "over the limit", data: expectBase + many, want: []string{"s.yaml: expect: Too many: 1001: must have at most 1000 items"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePlan("s.yaml", []byte(tc.data), nil)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExpectWithBase: the scenario's own config and expect are kept, the
// base's are not merged, and an assertion's error names the scenario's file.
func TestExpectWithBase(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(base, []byte(expectBase+"config: base-config.yaml\nexpect: [{maxSpread: 9}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, "top.yaml")
	plan, err := decodePlan(top, []byte("base: base.yaml\nconfig: top-config.yaml\nexpect: [{maxPodsPerNode: 3, nodes: {names: [eu-2]}}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Assertion{{MaxPodsPerNode: ptr.To(3), Nodes: &NodeSelector{Names: []string{"eu-2"}}}}, plan.Scenario.Expect); diff != "" {
		t.Errorf("expect (-want +got):\n%s", diff)
	}
	if plan.Scenario.Config != "top-config.yaml" {
		t.Errorf("config = %q, want top-config.yaml", plan.Scenario.Config)
	}
	_, err = decodePlan(top, []byte("base: base.yaml\nexpect: [{maxSpread: -1}]\n"), nil)
	if want := top + ": expect[0].maxSpread: Invalid value: -1: must not be negative"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestSelectors: the selectors match as the API server's do.
func TestSelectors(t *testing.T) {
	pods := &PodSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}}}
	nodes := &NodeSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpExists}}}
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"pod matches", pods.LabelSelector().Matches(labels.Set{"app": "web", "tier": "fe"}), true},
		{"pod of the excluded tier", pods.LabelSelector().Matches(labels.Set{"app": "web", "tier": "db"}), false},
		{"nil pod selector selects all", (*PodSelector)(nil).LabelSelector().Matches(labels.Set{}), true},
		{"node with the key", nodes.LabelSelector().Matches(labels.Set{"region": "x"}), true},
		{"node without the key", nodes.LabelSelector().Matches(labels.Set{}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}
