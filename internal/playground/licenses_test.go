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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// dynamicResourcesReason is DynamicResources' Filter rejection of a pod
// whose claims no device left can satisfy (v1.37.2).
const dynamicResourcesReason = "cannot allocate all claims"

// stepCounts is what a step of a run left: pods on nodes, pods waiting.
type stepCounts struct {
	Step           string
	Bound, Waiting int
}

// checkLicenses: examples/scenarios/licenses.yaml, as its header says,
// with the shipped config and with the default profile, the license
// driver's controller serving 10 seats of which desktops hold 4: of a Job
// of 10 pods each asking for one, 6 are seated and 4 wait (the progress
// says so before the steps); the desktops check 2 seats in and 8 run, 2
// wait; the other 2 and all 10 run.
func checkLicenses(t *testing.T, runs []report.Run, progress string) {
	for _, line := range []string{"starting the license driver's controller (1 feature(s), read every 1s)\n", "scheduled 6/10 pods, 4 unschedulable\n"} {
		if got, want := strings.Count(progress, line), len(runs); got != want {
			t.Errorf("the progress says %q %d times, want once per run (%d)", line, got, want)
		}
	}
	want := []stepCounts{
		{"set MATLAB seats checked out elsewhere from 4 to 2", 8, 2},
		{"set MATLAB seats checked out elsewhere from 2 to 0", 10, 0},
	}
	for _, run := range runs {
		if diff := cmp.Diff(want, countSteps(run)); diff != "" {
			t.Errorf("%s: pods bound and waiting after each step (-want +got):\n%s", run.Config, diff)
		}
		if len(run.Result.Pods) != 10 {
			t.Errorf("%s: %d pods, want the Job's 10", run.Config, len(run.Result.Pods))
		}
		for _, p := range run.Result.Pods {
			if p.Node == "" {
				t.Errorf("%s: pod %s never got a seat: %s", run.Config, p.Name, p.Reason)
			}
		}
	}
}

// countSteps is how many pods were bound and waiting after each step.
func countSteps(run report.Run) []stepCounts {
	var got []stepCounts
	for _, st := range run.Result.Steps {
		c := stepCounts{Step: st.Step, Waiting: st.Waiting}
		for _, n := range st.Nodes {
			c.Bound += n.Pods
		}
		got = append(got, c)
	}
	return got
}

// checkSeatsWaiting: testdata/seats-waiting.yaml with --explain: of 3 pods
// on 3 seats of which a desktop holds 1, 2 run and 1 waits, its reason and
// its explanation DynamicResources' rejection on both nodes (not the
// "Insufficient" a pod asking for an extended resource no DeviceClass maps
// gets: the driver created the class), and its seat line the figures: 3
// issued, 2 held by pods, 1 checked out elsewhere.
func checkSeatsWaiting(t *testing.T, runs []report.Run, _ string) {
	p := oneWaiting(t, runs[0].Result, 2)
	if !strings.Contains(p.Reason, "0/2 nodes are available: 2 "+dynamicResourcesReason) {
		t.Errorf("pod %s waits with %q, want DynamicResources' %q on both nodes", p.Name, p.Reason, dynamicResourcesReason)
	}
	want := []report.FilterGroup{{Stage: "Filter", Plugin: "DynamicResources", Code: "UnschedulableAndUnresolvable",
		Reason: dynamicResourcesReason, Nodes: []string{"worker-1", "worker-2"}}}
	if diff := cmp.Diff(want, p.Explain.Filtered); diff != "" {
		t.Errorf("pod %s: nodes filtered out (-want +got):\n%s", p.Name, diff)
	}
	seats := []report.LicenseSeats{{Feature: "MATLAB", Requested: 1, Issued: 3, HeldByPods: 2, CheckedOutElsewhere: 1}}
	if diff := cmp.Diff(seats, p.Explain.Seats); diff != "" {
		t.Errorf("pod %s: seats (-want +got):\n%s", p.Name, diff)
	}
}

// oneWaiting checks that bound pods of r are bound and one waits, with an
// explanation, and returns that one.
func oneWaiting(t *testing.T, r report.Result, bound int) report.PodResult {
	t.Helper()
	var waiting []report.PodResult
	for _, p := range r.Pods {
		if p.Node == "" {
			waiting = append(waiting, p)
		}
	}
	if len(r.Pods)-len(waiting) != bound || len(waiting) != 1 {
		t.Fatalf("%d pods bound, %d waiting, want %d and 1: %+v", len(r.Pods)-len(waiting), len(waiting), bound, r.Pods)
	}
	if waiting[0].Explain == nil {
		t.Fatalf("pod %s has no explanation", waiting[0].Name)
	}
	return waiting[0]
}

// checkSharedSeats: testdata/seats-shared.yaml, the driver publishing one
// shared device per feature (consumable capacity), with --explain: 4
// seats, desktops holding 2, a Job of 4 pods; 2 run and 2 wait, then a
// desktop checks its seat in: 3 run, 1 waits, its seat line 4 issued, 3
// held by pods (what their claims consume of the device), 1 checked out
// elsewhere.
func checkSharedSeats(t *testing.T, runs []report.Run, progress string) {
	if !strings.Contains(progress, "scheduled 2/4 pods, 2 unschedulable\n") {
		t.Errorf("the progress never said 2 of 4 pods were scheduled and 2 unschedulable")
	}
	want := []stepCounts{{"set MATLAB seats checked out elsewhere from 2 to 1", 3, 1}}
	if diff := cmp.Diff(want, countSteps(runs[0])); diff != "" {
		t.Errorf("pods bound and waiting after each step (-want +got):\n%s", diff)
	}
	p := oneWaiting(t, runs[0].Result, 3)
	seats := []report.LicenseSeats{{Feature: "MATLAB", Requested: 1, Issued: 4, HeldByPods: 3, CheckedOutElsewhere: 1}}
	if diff := cmp.Diff(seats, p.Explain.Seats); diff != "" {
		t.Errorf("pod %s: seats (-want +got):\n%s", p.Name, diff)
	}
	for _, p := range runs[0].Result.Pods {
		if p.Node != "" && (p.Explain == nil || len(p.Explain.Seats) > 0) {
			t.Errorf("pod %s on %s: explanation %+v, want one without seats (it does not wait)", p.Name, p.Node, p.Explain)
		}
	}
}
