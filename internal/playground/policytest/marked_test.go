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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// marked is what an outcome says of the pods it concerned.
type marked struct {
	Pods, Failing         []string
	MorePods, MoreFailing int
	At, Other             string
}

func marks(out []Outcome) []marked {
	var m []marked
	for _, o := range out {
		m = append(m, marked{o.Pods, o.Failing, o.MorePods, o.MoreFailing, o.At, o.Other})
	}
	return m
}

// TestOutcomePods: an outcome lists the pods its assertion selected and,
// when it failed, those its failure names: every bad pod, not only the
// MaxExplained explained ones; pods of another config are not among them.
func TestOutcomePods(t *testing.T) {
	oneInUS := result(ledger("l1", "eu-1"), ledger("l2", "us"), ledger("l3", "eu-2"), unschedulable())
	ledgers := []string{"payments/l1", "payments/l2", "payments/l3"}
	tests := []struct {
		name   string
		expect string
		result report.Result
		others map[string]report.Result
		want   []marked
	}{
		{
			name: "nodes: passing and failing",
			expect: `  - {pods: {namespace: payments}, nodes: {matchLabels: {region: eu}}}
  - {pods: {namespace: payments}, nodes: {names: [us, eu-1]}}
  - {pods: {namespace: payments}, nodes: {names: [old]}}`,
			result: oneInUS,
			want: []marked{
				{Pods: ledgers, Failing: []string{"payments/l2"}},
				{Pods: ledgers, Failing: []string{"payments/l3"}},
				// Four pods are past MaxExplained's three: all are named.
				{Pods: ledgers, Failing: ledgers},
			},
		},
		{
			name:   "maxPodsPerNode: the pods past the limit",
			expect: "  - {maxPodsPerNode: 1, pods: {namespace: payments}}",
			result: result(ledger("l1", "eu-1"), ledger("l2", "eu-1"), ledger("l3", "eu-1")),
			want:   []marked{{Pods: ledgers, Failing: []string{"payments/l2", "payments/l3"}}},
		},
		{
			name:   "no pod selected",
			expect: "  - {pods: {namespace: payments, matchLabels: {tier: web}}, maxPodsPerNode: 1}",
			result: oneInUS,
			want:   []marked{{}},
		},
		{
			name:   "samePlacementsAs: the other config's pods are not named",
			expect: "  - {samePlacementsAs: {config: other.yaml}, pods: {namespace: payments}}",
			result: oneInUS,
			others: map[string]report.Result{"other.yaml": result(ledger("x1", "eu-1"), ledger("x2", "eu-1"), ledger("x3", "eu-2"))},
			want:   []marked{{Pods: ledgers, Failing: []string{"payments/l1", "payments/l2"}, Other: "other.yaml"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := evaluate(t, tc.expect, tc.result, tc.others)
			if diff := cmp.Diff(tc.want, marks(out)); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutcomePodsAt: the pods of an afterStep assertion are those of the
// step, and the outcome says when they were taken.
func TestOutcomePodsAt(t *testing.T) {
	plan, err := planOf([]byte(cluster + `steps:
  - scale: {kind: Deployment, name: ledger, namespace: payments, replicas: 2}
expect:
  - {pods: {namespace: payments}, nodes: {names: [us]}, afterStep: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := result(ledger("l1", "us"))
	r.Steps = []report.StepResult{{Step: "scale Deployment payments/ledger to 2", Pods: []report.PodResult{ledger("l1", "us"), ledger("l2", "eu-1")}}}
	out := Evaluate(Input{Plan: plan, Nodes: plan.NodeObjects(time.Now()), Config: "main.yaml", Result: r})
	want := []marked{{Pods: []string{"payments/l1", "payments/l2"}, Failing: []string{"payments/l2"}, At: "after step 1 (scale Deployment payments/ledger to 2)"}}
	if diff := cmp.Diff(want, marks(out)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

// TestOutcomePodsBounded: at most MaxMarked pods are named, the others
// counted.
func TestOutcomePodsBounded(t *testing.T) {
	var pods []report.PodResult
	for i := range MaxMarked + 7 {
		pods = append(pods, ledger(fmt.Sprintf("l%d", i), "us"))
	}
	o := evaluate(t, "  - {nodes: {names: [eu-1]}}", result(pods...), nil)[0]
	if len(o.Pods) != MaxMarked || o.MorePods != 7 || len(o.Failing) != MaxMarked || o.MoreFailing != 7 {
		t.Errorf("%d pods and %d more, %d failing and %d more; want %d and 7 each", len(o.Pods), o.MorePods, len(o.Failing), o.MoreFailing, MaxMarked)
	}
	if o.Failing[MaxMarked-1] != fmt.Sprintf("payments/l%d", MaxMarked-1) {
		t.Errorf("last failing pod %s: not in result order", o.Failing[MaxMarked-1])
	}
}
