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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// TestEvaluateAfterStep: an assertion with afterStep checks the pods as
// they were once the objects settled (0) or after that step, not at the
// end, and says so in its name and message.
func TestEvaluateAfterStep(t *testing.T) {
	const scaled = cluster + `steps:
  - scale: {kind: Deployment, name: ledger, namespace: payments, replicas: 3}
  - scale: {kind: Deployment, name: ledger, namespace: payments, replicas: 1}
expect:
  - {minOnNodes: {count: 1}, pods: {namespace: payments}, nodes: {names: [us]}, afterStep: 0}
  - {minOnNodes: {count: 2}, pods: {namespace: payments}, nodes: {matchLabels: {region: eu}}, afterStep: 1}
  - {minOnNodes: {count: 2}, pods: {namespace: payments}, nodes: {matchLabels: {region: eu}}, afterStep: 2}
  - {minOnNodes: {count: 1}, pods: {namespace: payments}, nodes: {names: [us]}}
`
	plan, err := planOf([]byte(scaled))
	if err != nil {
		t.Fatal(err)
	}
	r := result(ledger("l1", "us"))
	r.Applied = []report.PodResult{ledger("l1", "us")}
	r.Steps = []report.StepResult{
		{Step: "scale Deployment payments/ledger to 3", Pods: []report.PodResult{ledger("l1", "us"), ledger("l2", "eu-1"), ledger("l3", "eu-2")}},
		{Step: "scale Deployment payments/ledger to 1", Pods: []report.PodResult{ledger("l1", "us")}},
	}
	out := Evaluate(Input{Plan: plan, Nodes: plan.NodeObjects(time.Now()), Config: "main.yaml", Result: r})
	want := []brief{
		{"at least 1 of the pods in payments on nodes us once the objects settled", true, ""},
		{"at least 2 of the pods in payments on nodes with region=eu after step 1", true, ""},
		{"at least 2 of the pods in payments on nodes with region=eu after step 2", false,
			"after step 2 (scale Deployment payments/ledger to 1): 0 of 1 pods are on nodes with region=eu, want at least 1: payments/l1 -> us"},
		{"at least 1 of the pods in payments on nodes us", true, ""},
	}
	if diff := cmp.Diff(want, briefs(out)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}
