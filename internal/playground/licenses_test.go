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
// with the shipped config and with the default profile: 10 seats and a
// Job of 15 pods each asking for one; after the first step 10 are on nodes
// and 5 wait (the progress said "5 unschedulable" before it), after the
// second all 15 were seated, each in turn, and the Job is complete.
func checkLicenses(t *testing.T, runs []report.Run, progress string) {
	if !strings.Contains(progress, "scheduled 10/15 pods, 5 unschedulable\n") {
		t.Errorf("the progress never said 10 of 15 pods were scheduled and 5 unschedulable")
	}
	want := []stepCounts{{"wait 1s", 10, 5}, {"wait 12s", 15, 0}}
	for _, run := range runs {
		var got []stepCounts
		for _, st := range run.Result.Steps {
			c := stepCounts{Step: st.Step, Waiting: st.Waiting}
			for _, n := range st.Nodes {
				c.Bound += n.Pods
			}
			got = append(got, c)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: pods bound and waiting after each step (-want +got):\n%s", run.Config, diff)
		}
		if len(run.Result.Pods) != 15 {
			t.Errorf("%s: %d pods, want the Job's 15", run.Config, len(run.Result.Pods))
		}
		for _, p := range run.Result.Pods {
			if p.Node == "" {
				t.Errorf("%s: pod %s never got a seat: %s", run.Config, p.Name, p.Reason)
			}
		}
	}
}

// checkSeatsWaiting: testdata/seats-waiting.yaml with --explain: of 3 pods
// on 2 seats (the DeviceClass and ResourceSlice listed after the Job,
// applied before it), 2 run and 1 waits, its reason and its explanation
// DynamicResources' rejection on both nodes, not the "Insufficient" a pod
// asking for an extended resource no DeviceClass maps gets.
func checkSeatsWaiting(t *testing.T, runs []report.Run, _ string) {
	var bound int
	var waiting []report.PodResult
	for _, p := range runs[0].Result.Pods {
		if p.Node != "" {
			bound++
		} else {
			waiting = append(waiting, p)
		}
	}
	if bound != 2 || len(waiting) != 1 {
		t.Fatalf("%d pods bound, %d waiting, want 2 and 1: %+v", bound, len(waiting), runs[0].Result.Pods)
	}
	p := waiting[0]
	if !strings.Contains(p.Reason, "0/2 nodes are available: 2 "+dynamicResourcesReason) {
		t.Errorf("pod %s waits with %q, want DynamicResources' %q on both nodes", p.Name, p.Reason, dynamicResourcesReason)
	}
	if p.Explain == nil {
		t.Fatalf("pod %s has no explanation", p.Name)
	}
	want := []report.FilterGroup{{Stage: "Filter", Plugin: "DynamicResources", Code: "UnschedulableAndUnresolvable",
		Reason: dynamicResourcesReason, Nodes: []string{"worker-1", "worker-2"}}}
	if diff := cmp.Diff(want, p.Explain.Filtered); diff != "" {
		t.Errorf("pod %s: nodes filtered out (-want +got):\n%s", p.Name, diff)
	}
}
