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

package policytest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// cluster: two EU nodes of one spec, one US node, one EU node holding a
// bound pod; a Deployment in payments and a Pod in batch.
const cluster = `nodes:
  - {name: eu, count: 2, labels: {region: eu}}
  - {name: us, labels: {region: us}}
  - {name: old, labels: {region: eu}}
boundPods:
  - {name: legacy, nodeName: old, containers: [{requests: {cpu: 1}}]}
objects:
  - {kind: Deployment, metadata: {name: ledger, namespace: payments}, spec: {template: {metadata: {labels: {tier: db}}, spec: {containers: [{name: c, image: i}]}}}}
  - {kind: Pod, metadata: {name: job, namespace: batch, labels: {tier: batch}}, spec: {containers: [{name: c, image: i}]}}
`

func pod(ns, name, object, node string) report.PodResult {
	p := report.PodResult{Namespace: ns, Name: name, Object: object, Node: node}
	if ns == "payments" {
		p.Labels = map[string]string{"tier": "db"}
	}
	if node != "" {
		p.Explain = &report.Explanation{Profile: "custom-scheduler", Attempt: 1, Chosen: node, Feasible: 1,
			Candidates: []report.Candidate{{Node: node, Chosen: true}}}
	}
	return p
}

func ledger(name, node string) report.PodResult {
	return pod("payments", name, "Deployment/ledger", node)
}

// unschedulable is the batch pod, rejected by PlacementPolicy on the EU
// nodes and by NodeAffinity on the US node.
func unschedulable() report.PodResult {
	p := pod("batch", "job", "Pod/job", "")
	p.Labels = map[string]string{"tier": "batch"}
	p.Reason = `Unschedulable: 0/4 nodes are available: 3 node(s) didn't match placement rule "us-only", 1 node(s) didn't match Pod's node affinity/selector.`
	p.Explain = &report.Explanation{Profile: "custom-scheduler", Attempt: 2, Filtered: []report.FilterGroup{
		{Stage: "Filter", Plugin: "PlacementPolicy", Code: "UnschedulableAndUnresolvable", Reason: `node(s) didn't match placement rule "us-only"`, Nodes: []string{"eu-1", "eu-2", "old"}},
		{Stage: "Filter", Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reason: "node(s) didn't match Pod's node affinity/selector", Nodes: []string{"us"}},
	}}
	return p
}

func result(pods ...report.PodResult) report.Result { return report.Result{Pods: pods} }

// evaluate decodes cluster with expect and evaluates it against r (and
// others, by config).
func evaluate(t *testing.T, expect string, r report.Result, others map[string]report.Result) []Outcome {
	t.Helper()
	plan, err := planOf([]byte(cluster + "expect:\n" + expect))
	if err != nil {
		t.Fatal(err)
	}
	return Evaluate(Input{Plan: plan, Nodes: plan.NodeObjects(time.Now()), Config: "main.yaml", Result: r, Others: others})
}

// brief is an outcome without its details, which are checked apart.
type brief struct {
	Name    string
	Passed  bool
	Message string
}

func briefs(out []Outcome) []brief {
	var b []brief
	for _, o := range out {
		b = append(b, brief{o.Name, o.Passed, o.Message})
	}
	return b
}

func TestEvaluate(t *testing.T) {
	inEU := result(ledger("l1", "eu-1"), ledger("l2", "eu-1"), ledger("l3", "old"), unschedulable())
	oneInUS := result(ledger("l1", "eu-1"), ledger("l2", "us"), ledger("l3", "eu-2"), unschedulable())
	tests := []struct {
		name   string
		expect string
		result report.Result
		others map[string]report.Result
		want   []brief
		// details are substrings of the first outcome's details.
		details []string
	}{
		{
			name:   "nodes: pass",
			expect: "  - {name: payments stay in the EU, pods: {namespace: payments, matchLabels: {tier: db}}, nodes: {matchLabels: {region: eu}}}",
			result: inEU,
			want:   []brief{{"payments stay in the EU", true, ""}},
		},
		{
			name:    "nodes: a pod in the US",
			expect:  "  - {pods: {namespace: payments}, nodes: {matchLabels: {region: eu}}}",
			result:  oneInUS,
			want:    []brief{{"pods in payments land only on nodes with region=eu", false, "1 of 3 pods are not on nodes with region=eu: payments/l2 -> us"}},
			details: []string{"payments/l2 -> us\n", "profile custom-scheduler, attempt 1: 1 feasible node(s)"},
		},
		{
			name:    "nodes: a pending pod fails",
			expect:  "  - {pods: {namespace: batch}, nodes: {names: [us]}}",
			result:  inEU,
			want:    []brief{{"pods in batch land only on nodes us", false, "1 of 1 pods are not on nodes us: batch/job is pending"}},
			details: []string{`batch/job pending: Unschedulable: 0/4 nodes`, "PlacementPolicy", `didn't match placement rule "us-only"`},
		},
		{
			name:   "a selection that matches no pod fails",
			expect: "  - {pods: {namespace: payments, matchLabels: {tier: web}}, maxPodsPerNode: 10}",
			result: inEU,
			want:   []brief{{"at most 10 pods in payments with tier=web per node", false, "no pod of the result matches pods in payments with tier=web"}},
		},
		{
			name: "unschedulable: plugin and rule",
			expect: `  - {pods: {namespace: batch}, unschedulable: {plugin: PlacementPolicy, rule: us-only}}
  - {pods: {object: {kind: Pod, name: job}, namespace: batch}, unschedulable: {plugin: NodeAffinity, message: "node affinity"}}
  - {pods: {matchLabels: {tier: batch}}, unschedulable: {}}`,
			result: inEU,
			want: []brief{
				{`pods in batch stay unschedulable, rejected by PlacementPolicy rule "us-only"`, true, ""},
				{`pods of Pod batch/job stay unschedulable, rejected by NodeAffinity with "node affinity"`, true, ""},
				{"pods with tier=batch stay unschedulable", true, ""},
			},
		},
		{
			name: "unschedulable: wrong plugin, rule, message; a bound pod",
			expect: `  - {pods: {namespace: batch}, unschedulable: {plugin: MaintenanceWindow}}
  - {pods: {namespace: batch}, unschedulable: {plugin: NodeAffinity, rule: us-only}}
  - {pods: {namespace: batch}, unschedulable: {message: "maintenance window"}}
  - {pods: {namespace: payments}, unschedulable: {}}`,
			result: inEU,
			want: []brief{
				{"pods in batch stay unschedulable, rejected by MaintenanceWindow", false, "1 of 1 pods are not unschedulable, rejected by MaintenanceWindow: batch/job was not rejected by MaintenanceWindow (rejected by NodeAffinity, PlacementPolicy)"},
				{`pods in batch stay unschedulable, rejected by NodeAffinity rule "us-only"`, false, `1 of 1 pods are not unschedulable, rejected by NodeAffinity rule "us-only": batch/job was not rejected by rule "us-only"`},
				{`pods in batch stay unschedulable, rejected by with "maintenance window"`, false, `1 of 1 pods are not unschedulable, rejected by with "maintenance window": batch/job was not rejected with "maintenance window"`},
				{"pods in payments stay unschedulable", false, "3 of 3 pods are not unschedulable: payments/l1 -> eu-1, payments/l2 -> eu-1, payments/l3 -> old"},
			},
			details: []string{"filtered out:", "NodeAffinity"},
		},
		{
			name: "maxPodsPerNode",
			expect: `  - {maxPodsPerNode: 2}
  - {maxPodsPerNode: 1, pods: {namespace: payments}}
  - {maxPodsPerNode: 1, nodes: {names: [old, eu-2]}}`,
			result: inEU,
			want: []brief{
				{"at most 2 pods per node", true, ""},
				{"at most 1 pods in payments per node", false, "more than 1 of the selected pods on a node: eu-1 holds 2"},
				{"at most 1 pods per node of nodes old, eu-2", true, ""},
			},
			details: []string{"payments/l2 -> eu-1"},
		},
		{
			name: "maxNodes",
			expect: `  - {maxNodes: 2, pods: {namespace: payments}}
  - {maxNodes: 1, pods: {namespace: payments}}
  - {maxNodes: 1, pods: {namespace: payments}, nodes: {names: [eu-1, us]}}`,
			result: inEU,
			want: []brief{
				{"pods in payments on at most 2 nodes", true, ""},
				{"pods in payments on at most 1 nodes", false, "the selected pods are on 2 nodes, more than 1: eu-1 holds 2, old holds 1"},
				{"pods in payments on at most 1 nodes of nodes eu-1, us", true, ""},
			},
			details: []string{"payments/l3 -> old"},
		},
		{
			name: "maxSpread counts empty nodes",
			expect: `  - {maxSpread: 1, nodes: {matchLabels: {region: eu}}}
  - {maxSpread: 2}
  - {maxSpread: 0, nodes: {names: [old]}}
  - {maxSpread: 0, nodes: {matchLabels: {region: mars}}}`,
			result: inEU,
			want: []brief{
				{"pods spread at most 1 over nodes with region=eu", false, "spread 2, more than 1: eu-1 holds 2 of the selected pods, eu-2 0"},
				{"pods spread at most 2", true, ""},
				{"pods spread at most 0 over nodes old", true, ""},
				{"pods spread at most 0 over nodes with region=mars", false, "no node of the scenario matches nodes with region=mars"},
			},
			details: []string{"payments/l2 -> eu-1", "payments/l1 -> eu-1"},
		},
		{
			name: "minOnNodes: the larger of count and percent, pending pods count as elsewhere",
			expect: `  - {minOnNodes: {percent: 50}, pods: {namespace: payments}, nodes: {matchLabels: {region: eu}}}
  - {minOnNodes: {count: 3}, pods: {namespace: payments}, nodes: {matchLabels: {region: eu}}}
  - {minOnNodes: {count: 1, percent: 100}, pods: {namespace: payments}, nodes: {names: [eu-1]}}
  - {minOnNodes: {count: 1}, pods: {namespace: batch}, nodes: {names: [eu-1]}}`,
			result: oneInUS,
			want: []brief{
				{"at least 50% of the pods in payments on nodes with region=eu", true, ""},
				{"at least 3 of the pods in payments on nodes with region=eu", false, "2 of 3 pods are on nodes with region=eu, want at least 3: payments/l2 -> us"},
				{"at least 1 and 100% of the pods in payments on nodes eu-1", false, "1 of 3 pods are on nodes eu-1, want at least 3: payments/l2 -> us, payments/l3 -> eu-2"},
				{"at least 1 of the pods in batch on nodes eu-1", false, "0 of 1 pods are on nodes eu-1, want at least 1: batch/job is pending"},
			},
			details: []string{"payments/l2 -> us"},
		},
		{
			// eu-1 and eu-2 are interchangeable: 2+0 and 0+2 are the
			// same; old holds a bound pod: a class of its own.
			name:   "samePlacementsAs: ties between like nodes",
			expect: "  - {samePlacementsAs: {config: other.yaml}}",
			result: inEU,
			others: map[string]report.Result{"other.yaml": result(ledger("x1", "eu-2"), ledger("x2", "eu-2"), ledger("x3", "old"), unschedulable())},
			want:   []brief{{"pods placed as under other.yaml", true, ""}},
		},
		{
			name:    "samePlacementsAs: a pod moved to another class",
			expect:  "  - {samePlacementsAs: {config: other.yaml}, pods: {namespace: payments}}",
			result:  inEU,
			others:  map[string]report.Result{"other.yaml": result(ledger("x1", "eu-2"), ledger("x2", "eu-1"), ledger("x3", "eu-1"), unschedulable())},
			want:    []brief{{"pods in payments placed as under other.yaml", false, "placed otherwise than under other.yaml (pods per node of each object, per class of like nodes): Deployment payments/ledger on eu-1, eu-2: [2 0] under main.yaml, [2 1] under other.yaml, Deployment payments/ledger on old: [1] under main.yaml, [0] under other.yaml"}},
			details: []string{"payments/l1 -> eu-1 (under main.yaml)", "payments/x1 -> eu-2 (under other.yaml)"},
		},
		{
			name:   "samePlacementsAs: unbound pods differ",
			expect: "  - {samePlacementsAs: {config: other.yaml}, pods: {namespace: batch}}",
			result: inEU,
			others: map[string]report.Result{"other.yaml": result(pod("batch", "job", "Pod/job", "us"))},
			want: []brief{{"pods in batch placed as under other.yaml", false,
				"placed otherwise than under other.yaml (pods per node of each object, per class of like nodes): Pod batch/job: 1 unbound under main.yaml, 0 under other.yaml, Pod batch/job on us: [0] under main.yaml, [1] under other.yaml"}},
		},
		{
			name:   "samePlacementsAs: a config that did not run",
			expect: "  - {samePlacementsAs: {config: other.yaml}}",
			result: inEU,
			want:   []brief{{"pods placed as under other.yaml", false, "the scenario was not run under other.yaml"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := evaluate(t, tc.expect, tc.result, tc.others)
			if diff := cmp.Diff(tc.want, briefs(out)); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			var details string
			for _, o := range out {
				if !o.Passed {
					details = o.Details
					break
				}
			}
			for _, d := range tc.details {
				if !strings.Contains(details, d) {
					t.Errorf("details do not contain %q:\n%s", d, details)
				}
			}
		})
	}
}

// TestEvaluateBounded: a failure about many pods names MaxListed of them
// and explains MaxExplained.
func TestEvaluateBounded(t *testing.T) {
	var pods []report.PodResult
	for i := range 100 {
		pods = append(pods, ledger(fmt.Sprintf("l%d", i), "us"))
	}
	out := evaluate(t, "  - {nodes: {names: [eu-1]}}", result(pods...), nil)
	want := "100 of 100 pods are not on nodes eu-1: payments/l0 -> us, payments/l1 -> us, payments/l2 -> us, payments/l3 -> us, payments/l4 -> us and 95 more"
	if diff := cmp.Diff(want, out[0].Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if got := strings.Count(out[0].Details, "profile custom-scheduler"); got != MaxExplained {
		t.Errorf("%d explanations, want %d:\n%s", got, MaxExplained, out[0].Details)
	}
}

// TestSamePinned: nodes that objects pin pods to are not interchangeable,
// even when one spec made them.
func TestSamePinned(t *testing.T) {
	const pinned = `nodes: [{name: node, count: 2}]
objects:
  - {kind: Pod, metadata: {name: agent}, spec: {nodeSelector: {kubernetes.io/hostname: node-2}, containers: [{name: c, image: i}]}}
  - {kind: ReplicaSet, metadata: {name: app}, spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
expect: [{samePlacementsAs: {config: other.yaml}, pods: {object: {kind: ReplicaSet, name: app}}}]
`
	plan, err := planOf([]byte(pinned))
	if err != nil {
		t.Fatal(err)
	}
	app := func(node string) report.PodResult { return pod("default", "app-x", "ReplicaSet/app", node) }
	out := Evaluate(Input{Plan: plan, Nodes: plan.NodeObjects(time.Now()), Config: "main.yaml",
		Result:     result(pod("default", "agent", "Pod/agent", "node-2"), app("node-1")),
		Others:     map[string]report.Result{"other.yaml": result(pod("default", "agent", "Pod/agent", "node-2"), app("node-2"))},
		OtherNames: map[string]string{"other.yaml": "dir/other.yaml"}})
	want := []brief{{"pods of ReplicaSet default/app placed as under other.yaml", false,
		"placed otherwise than under dir/other.yaml (pods per node of each object, per class of like nodes): " +
			"ReplicaSet default/app on node-1: [1] under main.yaml, [0] under dir/other.yaml, ReplicaSet default/app on node-2: [0] under main.yaml, [1] under dir/other.yaml"}}
	if diff := cmp.Diff(want, briefs(out)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// planOf decodes a scenario file's data and plans it.
func planOf(data []byte) (*scenario.Plan, error) {
	f, err := scenario.Decode("s.yaml", data)
	if err != nil {
		return nil, err
	}
	return f.Plan(nil)
}
