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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDecodeNodeConditions: a node's conditions are checked field by field,
// with the field's path, and a YAML 1.1 word is refused before decoding.
func TestDecodeNodeConditions(t *testing.T) {
	cond := func(c string) string { return "nodes: [{name: a, conditions: [" + c + "]}]" }
	tests := []struct {
		name string
		data string
		// want are substrings of the error; none means valid.
		want []string
	}{
		{name: "quoted True", data: cond(`{type: MaintenancePlanned, status: "True", reason: Upgrade, message: "at ${now+2h}"}`)},
		{name: "unquoted True and False are booleans", data: cond(`{type: DrainInProgress, status: True}, {type: Drained, status: false}`)},
		{name: "Unknown", data: cond(`{type: MaintenanceInProgress, status: Unknown}`)},
		{name: "yes", data: cond(`{type: DrainInProgress, status: yes}`), want: []string{
			`s.yaml: nodes[0].conditions[0].status: Invalid value: "yes": this unquoted value is a YAML 1.1 boolean (true)`}},
		{name: "off", data: "nodes:\n- name: a\n  conditions:\n  - type: Drained\n    status: off\n", want: []string{
			`nodes[0].conditions[0].status: Invalid value: "off"`}},
		{name: "other word", data: cond(`{type: Drained, status: maybe}`), want: []string{
			`s.yaml: nodes[0].conditions[0].status: Unsupported value: "maybe": supported values: "True", "False", "Unknown"`}},
		{name: "lower case true quoted", data: cond(`{type: Drained, status: "true"}`), want: []string{
			`nodes[0].conditions[0].status: Unsupported value: "true"`}},
		{name: "status missing", data: cond(`{type: Drained}`), want: []string{
			`nodes[0].conditions[0].status: Unsupported value: ""`}},
		{name: "number", data: cond(`{type: Drained, status: 1}`), want: []string{
			"condition status must be True, False or Unknown, got 1"}},
		{name: "type missing", data: cond(`{status: "True"}`), want: []string{
			"nodes[0].conditions[0].type: Required value"}},
		{name: "kubelet's", data: cond(`{type: Ready, status: "False"}`), want: []string{
			"nodes[0].conditions[0].type: Forbidden: Ready is set by KWOK as a kubelet would"}},
		{name: "duplicate", data: cond(`{type: Drained, status: "True"}, {type: Drained, status: "False"}`), want: []string{
			`nodes[0].conditions[1].type: Duplicate value: "Drained"`}},
		{name: "bad type", data: cond(`{type: "drain in progress", status: "True"}`), want: []string{
			`nodes[0].conditions[0].type: Invalid value: "drain in progress"`}},
		{name: "bad placeholder", data: cond(`{type: MaintenancePlanned, status: "True", message: "${now+2}"}`), want: []string{
			`nodes[0].conditions[0].message: Invalid value: "${now+2}": malformed placeholder "${now+2}"`}},
		{name: "long message", data: cond(`{type: Drained, status: "True", message: ` + strings.Repeat("x", 1025) + `}`), want: []string{
			"nodes[0].conditions[0].message: Too long: may not be more than 1024 bytes"}},
		{name: "long reason", data: cond(`{type: Drained, status: "True", reason: ` + strings.Repeat("x", 129) + `}`), want: []string{
			"nodes[0].conditions[0].reason: Too long: may not be more than 128 bytes"}},
		{name: "too many", data: cond(strings.Repeat(`{type: Drained, status: "True"}, `, 17)), want: []string{
			"nodes[0].conditions: Too many: 17: must have at most 16 items"}},
		{
			name: "in total over the limit",
			data: "nodes: [{name: a, count: 10000, conditions: [{type: Drained, status: \"True\", message: " + strings.Repeat("x", 1024) + "}, {type: DrainInProgress, status: \"True\", message: " + strings.Repeat("x", 1024) + "}]}]",
			want: []string{"s.yaml: nodes: Invalid value: 20780000: bytes of node conditions in total (their fields times each count): must be at most 16777216"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

// TestNodeConditions: NodeObjects gives every node the kubelet's Ready and
// then its spec's conditions, transitioned when the nodes are created, with
// the messages' placeholders expanded; ScenarioConditions returns the
// spec's only.
func TestNodeConditions(t *testing.T) {
	s, err := decodePlan("s.yaml", []byte(`
nodes:
  - name: planned
    count: 2
    conditions:
      - type: MaintenancePlanned
        status: True
        reason: KernelUpgrade
        message: "from ${now+2h}"
      - {type: DrainInProgress, status: "False"}
  - name: plain
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2031, time.March, 4, 8, 15, 30, 999_999_999, time.UTC)
	nodes := s.NodeObjects(now)
	at := metav1.NewTime(now.Truncate(time.Second))
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}
	own := []corev1.NodeCondition{
		{Type: "MaintenancePlanned", Status: corev1.ConditionTrue, Reason: "KernelUpgrade", Message: "from 2031-03-04T10:15:30Z", LastHeartbeatTime: at, LastTransitionTime: at},
		{Type: "DrainInProgress", Status: corev1.ConditionFalse, LastHeartbeatTime: at, LastTransitionTime: at},
	}
	want := map[string][]corev1.NodeCondition{
		"planned-1": append([]corev1.NodeCondition{ready}, own...),
		"planned-2": append([]corev1.NodeCondition{ready}, own...),
		"plain":     {ready},
	}
	got := map[string][]corev1.NodeCondition{}
	for _, n := range nodes {
		got[n.Name] = n.Status.Conditions
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(own, ScenarioConditions(nodes[0])); diff != "" {
		t.Errorf("ScenarioConditions (-want +got):\n%s", diff)
	}
	if got := ScenarioConditions(nodes[2]); len(got) != 0 {
		t.Errorf("ScenarioConditions of plain: %v, want none", got)
	}
	// Every node has its own list.
	nodes[0].Status.Conditions[1].Status = corev1.ConditionFalse
	if nodes[1].Status.Conditions[1].Status != corev1.ConditionTrue {
		t.Errorf("changing planned-1's conditions changed planned-2's")
	}
}
