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

package maintenancewindow

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// gkeRecorded is the value GKE's documentation shows for the label
// (https://cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events):
// 2024-12-01T20:00:00Z.
const gkeRecorded = "1733083200"

var gkeStart = time.Date(2024, 12, 1, 20, 0, 0, 0, time.UTC)

// gkeNode is a node labelled by GKE with value and, unless empty, our
// annotation.
func gkeNode(name, value, annotation string) *v1.Node {
	n := node(name, annotation)
	n.Labels = map[string]string{"kubernetes.io/hostname": name, GKEMaintenanceLabel: value}
	return n
}

func TestParseUnixStart(t *testing.T) {
	tests := []struct {
		value   string
		want    []window.Window
		wantErr bool
	}{
		{value: gkeRecorded, want: []window.Window{{Start: gkeStart, End: gkeStart.Add(time.Hour)}}},
		{value: "0", want: []window.Window{{Start: time.Unix(0, 0).UTC(), End: time.Unix(3600, 0).UTC()}}},
		{value: "253402300799", want: []window.Window{{Start: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
			End: time.Date(10000, 1, 1, 0, 59, 59, 0, time.UTC)}}},
		{value: "253402300800", wantErr: true},
		{value: "99999999999999999999", wantErr: true},
		{value: "-1733083200", wantErr: true},
		{value: "+1733083200", wantErr: true},
		{value: " 1733083200", wantErr: true},
		{value: "1733083200.5", wantErr: true},
		{value: "2024-12-01T20:00:00Z", wantErr: true},
		{value: "tomorrow", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, err := window.ParseUnixStart(tc.value, time.Hour)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("windows (-want +got):\n%s", diff)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
		})
	}
}

// TestProviderSignals judges nodes labelled by GKE at times around the
// documented value, with avoidWithin 1h and the default 1h duration.
func TestProviderSignals(t *testing.T) {
	opens := "node's maintenance window opens at 2024-12-01T20:00:00Z (until 2024-12-01T21:00:00Z)"
	tests := []struct {
		name string
		node *v1.Node
		at   time.Duration // the clock, from gkeStart
		pod  *v1.Pod
		edit func(*config.MaintenanceWindowArgs)
		want string
	}{
		{name: "recorded value, 30m ahead", node: gkeNode("n", gkeRecorded, ""), at: -30 * time.Minute, want: opens},
		{name: "recorded value, 2h ahead", node: gkeNode("n", gkeRecorded, ""), at: -2 * time.Hour},
		{name: "recorded value, started 30m ago: open for the assumed hour", node: gkeNode("n", gkeRecorded, ""), at: 30 * time.Minute,
			want: "node is in a maintenance window until 2024-12-01T21:00:00Z"},
		{name: "in the past", node: gkeNode("n", gkeRecorded, ""), at: 2 * time.Hour},
		{name: "providerWindowDuration 4h: still open 2h after", node: gkeNode("n", gkeRecorded, ""), at: 2 * time.Hour,
			edit: func(a *config.MaintenanceWindowArgs) { a.ProviderWindowDuration.Duration = 4 * time.Hour },
			want: "node is in a maintenance window until 2024-12-02T00:00:00Z"},
		{name: "providerSignals off", node: gkeNode("n", gkeRecorded, ""), at: 30 * time.Minute,
			edit: func(a *config.MaintenanceWindowArgs) { a.ProviderSignals = false }},
		{name: "malformed: no window", node: gkeNode("n", "tomorrow", ""), at: 0},
		{name: "a Job that ends first", node: gkeNode("n", gkeRecorded, ""), at: -30 * time.Minute, pod: jobPod("job", 600, "")},
		// Both sources on one node: each window counts at its own time.
		{name: "both: the label's window", at: 30 * time.Minute,
			node: gkeNode("n", gkeRecorded, "2024-12-02T02:00:00Z/2024-12-02T04:00:00Z"),
			want: "node is in a maintenance window until 2024-12-01T21:00:00Z"},
		{name: "both: between the windows", at: 2 * time.Hour,
			node: gkeNode("n", gkeRecorded, "2024-12-02T02:00:00Z/2024-12-02T04:00:00Z")},
		{name: "both: the annotation's window", at: 7 * time.Hour,
			node: gkeNode("n", gkeRecorded, "2024-12-02T02:00:00Z/2024-12-02T04:00:00Z"),
			want: "node is in a maintenance window until 2024-12-02T04:00:00Z"},
		{name: "both: overlapping windows count as one", at: 30 * time.Minute,
			node: gkeNode("n", gkeRecorded, "2024-12-01T20:30:00Z/2024-12-01T23:00:00Z"),
			want: "node is in a maintenance window until 2024-12-01T23:00:00Z"},
		{name: "both: the label malformed, the annotation still counts", at: 7 * time.Hour,
			node: gkeNode("n", "soon", "2024-12-02T02:00:00Z/2024-12-02T04:00:00Z"),
			want: "node is in a maintenance window until 2024-12-02T04:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, clk, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) {
				a.AvoidWithin.Duration = time.Hour
				if tc.edit != nil {
					tc.edit(a)
				}
			}))
			clk.SetTime(gkeStart.Add(tc.at))
			pod := tc.pod
			if pod == nil {
				pod = jobPod("deploy", 0, "")
			}
			checkFilter(ctx, t, pl, nil, pod, tc.node, tc.want)
		})
	}
}

// TestProviderSignalsStates checks that the nodes metric judges the label
// as Filter does.
func TestProviderSignalsStates(t *testing.T) {
	tests := []struct {
		name      string
		node      *v1.Node
		at        time.Duration
		want      string
		wantState bool
	}{
		{name: "avoided", node: gkeNode("n", gkeRecorded, ""), at: -30 * time.Minute, want: stateAvoided, wantState: true},
		{name: "open", node: gkeNode("n", gkeRecorded, ""), at: 30 * time.Minute, want: stateOpen, wantState: true},
		{name: "upcoming", node: gkeNode("n", gkeRecorded, ""), at: -5 * time.Hour, want: stateUpcoming, wantState: true},
		{name: "past", node: gkeNode("n", gkeRecorded, ""), at: 2 * time.Hour},
		{name: "invalid", node: gkeNode("n", "tomorrow", ""), want: stateInvalid, wantState: true},
		{name: "invalid label next to a valid annotation", node: gkeNode("n", "tomorrow", "2024-12-02T02:00:00Z/2024-12-02T04:00:00Z"),
			want: stateInvalid, wantState: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = time.Hour }))
			got, ok := pl.nodeState(tc.node, gkeStart.Add(tc.at))
			if got != tc.want || ok != tc.wantState {
				t.Errorf("nodeState: got %q, %v, want %q, %v", got, ok, tc.want, tc.wantState)
			}
		})
	}
}

// TestProviderSignalsEvents: a label change can end a rejection only when
// a source lives in labels, a condition change only when conditions are
// read.
func TestProviderSignalsEvents(t *testing.T) {
	tests := []struct {
		name       string
		providers  bool
		conditions bool
		want       fwk.ActionType
	}{
		{name: "providers and conditions on", providers: true, conditions: true, want: fwk.Add | fwk.UpdateNodeAnnotation | fwk.UpdateNodeLabel | fwk.UpdateNodeCondition},
		{name: "providers off", providers: false, conditions: true, want: fwk.Add | fwk.UpdateNodeAnnotation | fwk.UpdateNodeCondition},
		{name: "conditions off", providers: true, conditions: false, want: fwk.Add | fwk.UpdateNodeAnnotation | fwk.UpdateNodeLabel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) {
				a.ProviderSignals, a.NodeConditions = tc.providers, tc.conditions
			}))
			events, err := pl.EventsToRegister(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != 1 || events[0].Event.ActionType != tc.want {
				t.Errorf("events: %+v, want one Node event with actions %v", events, tc.want)
			}
		})
	}
	logger, _ := ktesting.NewTestContext(t)
	pl, clk, _ := newPlugin(t, defaultArgs(nil))
	clk.SetTime(gkeStart.Add(30 * time.Minute))
	hint, err := pl.isSchedulableAfterNodeChange(logger, jobPod("p", 0, ""), gkeNode("n", gkeRecorded, ""), node("n", ""))
	if err != nil || hint != fwk.Queue {
		t.Errorf("label removed: got %v, %v, want Queue", hint, err)
	}
}
