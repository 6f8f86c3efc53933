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
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/podgrouptest"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// jobPod is a pod with activeDeadlineSeconds (0: none) and, unless empty,
// the expected-runtime annotation.
func jobPod(name string, deadline int64, annotation string) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").UID(name).Obj()
	if deadline != 0 {
		p.Spec.ActiveDeadlineSeconds = ptr.To(deadline)
	}
	if annotation != "" {
		p.Annotations = map[string]string{ExpectedRuntimeAnnotation: annotation}
	}
	return p
}

func TestPodRuntime(t *testing.T) {
	tests := []struct {
		name    string
		pod     *v1.Pod
		want    window.Runtime
		wantErr bool
	}{
		{name: "nothing", pod: jobPod("p", 0, "")},
		{name: "deadline", pod: jobPod("p", 1200, ""), want: window.Runtime{D: 20 * time.Minute, Known: true}},
		{name: "annotation", pod: jobPod("p", 0, "1h30m"), want: window.Runtime{D: 90 * time.Minute, Known: true}},
		{name: "both: the annotation is smaller", pod: jobPod("p", 7200, "20m"), want: window.Runtime{D: 20 * time.Minute, Known: true}},
		{name: "both: the deadline is smaller", pod: jobPod("p", 1200, "2h"), want: window.Runtime{D: 20 * time.Minute, Known: true}},
		{name: "malformed annotation", pod: jobPod("p", 0, "soon"), wantErr: true},
		{name: "malformed annotation, the deadline still counts", pod: jobPod("p", 1200, "soon"),
			want: window.Runtime{D: 20 * time.Minute, Known: true}, wantErr: true},
		{name: "zero annotation", pod: jobPod("p", 0, "0s"), wantErr: true},
		{name: "negative annotation", pod: jobPod("p", 0, "-5m"), wantErr: true},
		{name: "366 days is the most", pod: jobPod("p", 0, "8784h"), want: window.Runtime{D: 8784 * time.Hour, Known: true}},
		{name: "absurd annotation", pod: jobPod("p", 0, "8784h1s"), wantErr: true},
		{name: "absurd deadline", pod: jobPod("p", 8784*3600+1, "")},
		{name: "negative deadline", pod: jobPod("p", -5, "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := window.PodRuntime(tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("podRuntime (-want +got):\n%s", diff)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
		})
	}
}

// TestRuntimeAwareFilter: avoidWithin 2h, margin 10m; the node's window
// opens in an hour.
func TestRuntimeAwareFilter(t *testing.T) {
	soon := node("soon", interval(1, 3))
	open := node("open", interval(-1, 1))
	rejected := "node's maintenance window opens at 2026-12-01T01:00:00Z (until 2026-12-01T03:00:00Z)"
	tests := []struct {
		name   string
		pod    *v1.Pod
		node   *v1.Node
		margin time.Duration
		off    bool // runtimeAware: false
		want   string
	}{
		{name: "Job pod with a 20-minute deadline", pod: jobPod("job", 1200, ""), node: soon},
		{name: "Deployment pod: no deadline", pod: jobPod("deploy", 0, ""), node: soon, want: rejected},
		{name: "ends with the margin exactly at the start", pod: jobPod("p", 3000, ""), node: soon},
		{name: "ends a second into the margin", pod: jobPod("p", 3001, ""), node: soon, want: rejected},
		{name: "margin 0: ends exactly at the start", pod: jobPod("p", 3600, ""), node: soon, margin: -1},
		{name: "margin 0: ends a second after the start", pod: jobPod("p", 3601, ""), node: soon, margin: -1, want: rejected},
		{name: "annotation", pod: jobPod("p", 0, "20m"), node: soon},
		{name: "annotation too long", pod: jobPod("p", 0, "1h"), node: soon, want: rejected},
		{name: "both set: the smaller, the deadline", pod: jobPod("p", 1200, "2h"), node: soon},
		{name: "both set: the smaller, the annotation", pod: jobPod("p", 7200, "20m"), node: soon},
		{name: "malformed annotation: unknown", pod: jobPod("p", 0, "20 minutes"), node: soon, want: rejected},
		{name: "zero annotation: unknown", pod: jobPod("p", 0, "0s"), node: soon, want: rejected},
		{name: "negative annotation: unknown", pod: jobPod("p", 0, "-20m"), node: soon, want: rejected},
		{name: "runtimeAware off", pod: jobPod("job", 1200, ""), node: soon, off: true, want: rejected},
		{name: "open window rejects every pod", pod: jobPod("p", 60, ""), node: open,
			want: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
	}
	for _, tc := range tests {
		for _, preFilter := range []bool{true, false} {
			name := tc.name
			if !preFilter {
				name += ", filter only"
			}
			t.Run(name, func(t *testing.T) {
				_, ctx := ktesting.NewTestContext(t)
				pl, _, h := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) {
					a.AvoidWithin.Duration = 2 * time.Hour
					switch {
					case tc.margin < 0:
						a.RuntimeMargin.Duration = 0
					case tc.margin > 0:
						a.RuntimeMargin.Duration = tc.margin
					}
					a.RuntimeAware = !tc.off
				}), tc.node)
				h.addPod(t, tc.pod)
				var state fwk.CycleState
				if preFilter {
					state = framework.NewCycleState()
					if _, status := pl.PreFilter(ctx, state, tc.pod, nil); !status.IsSuccess() {
						t.Fatalf("PreFilter: %v", status)
					}
				}
				checkFilter(ctx, t, pl, state, tc.pod, tc.node, tc.want)
			})
		}
	}
}

// TestRuntimeAwareScore: horizon 24h, margin 10m. A pod of known runtime
// ranks first the nodes whose window opens soonest after its end, then the
// nodes without a window, then those whose window would interrupt it; a pod
// of unknown runtime is scored as before.
func TestRuntimeAwareScore(t *testing.T) {
	nodes := []*v1.Node{
		node("none", ""),
		node("in-30m", interval(0.5, 1)),
		node("in-2h", interval(2, 3)),
		node("in-5h", interval(5, 6)),
		node("in-30h", interval(30, 31)),
		node("open", interval(-1, 1)),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		off  bool
		want []int64 // in the order of nodes
	}{
		// Today's scores: linear over the horizon.
		{name: "unknown runtime", pod: jobPod("deploy", 0, ""), want: []int64{100, 2, 8, 20, 100, 0}},
		{name: "malformed annotation: as unknown", pod: jobPod("p", 0, "soon"), want: []int64{100, 2, 8, 20, 100, 0}},
		{name: "runtimeAware off", pod: jobPod("job", 3600, ""), off: true, want: []int64{100, 2, 8, 20, 100, 0}},
		// Ends at 1h10m with the margin: in-2h has 50 minutes of slack,
		// in-5h 3h50m; in-30m would interrupt it.
		{name: "1h job", pod: jobPod("job", 3600, ""), want: []int64{10, 0, 96, 85, 10, 0}},
		// Ends at 5h10m: only in-30h is left before its window, with more
		// slack than the horizon: as a node without a window.
		{name: "5h job", pod: jobPod("job", 5*3600, ""), want: []int64{10, 0, 0, 0, 10, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.RuntimeAware = !tc.off }), nodes...)
			state := framework.NewCycleState()
			if status := pl.PreScore(ctx, state, tc.pod, nil); !status.IsSuccess() {
				t.Fatalf("PreScore: %v", status)
			}
			var scores fwk.NodeScoreList
			for _, n := range nodes {
				s, status := pl.Score(ctx, state, tc.pod, nodeInfo(n))
				if !status.IsSuccess() {
					t.Fatalf("Score(%s): %v", n.Name, status)
				}
				scores = append(scores, fwk.NodeScore{Name: n.Name, Score: s})
			}
			pl.NormalizeScore(ctx, state, tc.pod, scores)
			var got []int64
			for _, s := range scores {
				got = append(got, s.Score)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSignPodRuntime: pods that the plugin judges alike sign alike, and
// pods it judges apart sign apart.
func TestSignPodRuntime(t *testing.T) {
	tests := []struct {
		name string
		a, b *v1.Pod
		// aGroup and bGroup put a and b in pod groups.
		aGroup, bGroup string
		off            bool
		same           bool
	}{
		{name: "no runtime, either", a: jobPod("a", 0, ""), b: jobPod("b", 0, ""), same: true},
		{name: "a deadline and none", a: jobPod("a", 1200, ""), b: jobPod("b", 0, ""), same: false},
		{name: "different deadlines", a: jobPod("a", 1200, ""), b: jobPod("b", 1201, ""), same: false},
		{name: "a deadline and the same annotation", a: jobPod("a", 1200, ""), b: jobPod("b", 0, "20m"), same: true},
		{name: "a malformed annotation is no runtime", a: jobPod("a", 0, "soon"), b: jobPod("b", 0, ""), same: true},
		{name: "the same runtime, one in a group", a: jobPod("a", 1200, ""), b: jobPod("b", 1200, ""), bGroup: "g", same: false},
		{name: "members of one group", a: jobPod("a", 1200, ""), b: jobPod("b", 1200, ""), aGroup: "g", bGroup: "g", same: true},
		{name: "look-ahead off: runtimes do not count", a: jobPod("a", 1200, ""), b: jobPod("b", 0, ""), off: true, same: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.aGroup != "" || tc.bGroup != "" {
				podgrouptest.Skip(t)
			}
			for _, m := range []struct {
				pod   *v1.Pod
				group string
			}{{tc.a, tc.aGroup}, {tc.b, tc.bGroup}} {
				if m.group != "" {
					podgrouptest.SetGroup(m.pod, m.group)
				}
			}
			_, ctx := ktesting.NewTestContext(t)
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.RuntimeAware = !tc.off }))
			fa, _ := pl.SignPod(ctx, tc.a)
			fb, _ := pl.SignPod(ctx, tc.b)
			if got := cmp.Equal(fa, fb); got != tc.same {
				t.Errorf("same signature: got %v, want %v\n%v\n%v", got, tc.same, fa, fb)
			}
		})
	}
}

// TestMalformedRuntimeIsLoggedOnce: a malformed annotation is logged once
// per cycle, at V(4), and Filter still runs.
func TestMalformedRuntimeIsLoggedOnce(t *testing.T) {
	tests := []struct {
		name       string
		annotation string
		want       int
	}{
		{name: "malformed", annotation: "20 minutes", want: 1},
		{name: "absurd", annotation: "9000h", want: 1},
		{name: "well-formed", annotation: "20m", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(4)))
			ctx := klog.NewContext(context.Background(), logger)
			n := node("soon", interval(1, 3))
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = 2 * time.Hour }), n)
			pod := jobPod("p", 0, tc.annotation)
			state := framework.NewCycleState()
			pl.PreFilter(ctx, state, pod, nil)
			for range 3 {
				pl.Filter(ctx, state, pod, nodeInfo(n))
			}
			pl.PreScore(ctx, state, pod, nil)
			pl.Score(ctx, state, pod, nodeInfo(n))
			got := 0
			for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
				if e.Message == "Ignoring the pod's expected runtime" {
					got++
				}
			}
			if got != tc.want {
				t.Errorf("logged %d times, want %d", got, tc.want)
			}
		})
	}
}

// TestRuntimeAwareQueueingHint: the hint judges a window that has not
// opened yet as Filter does, sparing a pod that ends before it.
func TestRuntimeAwareQueueingHint(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = 2 * time.Hour }))
	tests := []struct {
		name string
		pod  *v1.Pod
		want fwk.QueueingHint
	}{
		{name: "ends before the window", pod: jobPod("job", 1200, ""), want: fwk.Queue},
		{name: "runtime unknown", pod: jobPod("deploy", 0, ""), want: fwk.QueueSkip},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterNodeChange(logger, tc.pod, nil, node("n", interval(1, 3)))
			if err != nil || got != tc.want {
				t.Errorf("hint %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
