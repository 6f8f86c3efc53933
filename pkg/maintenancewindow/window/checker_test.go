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

package window

import (
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

const key = "scheduling.adminsched.io/maintenance-window"

// now is the tests' clock: 2026-12-01T00:00:00Z.
var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// interval is "START/END" for a window from h1 to h2 hours after now.
func interval(h1, h2 float64) string {
	at := func(h float64) string { return now.Add(time.Duration(h * float64(time.Hour))).Format(time.RFC3339) }
	return at(h1) + "/" + at(h2)
}

// testArgs avoids nodes whose window opens within 2h, spares pods that end
// 10m before it, exempts pods labelled tier=infra and reads GKE's label as
// a one-hour window.
func testArgs() *config.MaintenanceWindowArgs {
	return &config.MaintenanceWindowArgs{
		AnnotationKey:          key,
		AvoidWithin:            metav1.Duration{Duration: 2 * time.Hour},
		Horizon:                metav1.Duration{Duration: 24 * time.Hour},
		IgnoreDaemonSetPods:    true,
		ExemptPodSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "infra"}},
		RuntimeAware:           true,
		RuntimeMargin:          metav1.Duration{Duration: 10 * time.Minute},
		ProviderSignals:        true,
		ProviderWindowDuration: metav1.Duration{Duration: time.Hour},
	}
}

// testNode announces annotation in our key and gkeStart in GKE's label,
// each unless empty.
func testNode(annotation, gkeStart string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{}, Labels: map[string]string{}}}
	if annotation != "" {
		n.Annotations[key] = annotation
	}
	if gkeStart != "" {
		n.Labels[GKEMaintenanceLabel] = gkeStart
	}
	return n
}

// gkeAt is GKE's label value for a start h hours after now.
func gkeAt(h float64) string {
	return strconv.FormatInt(now.Add(time.Duration(h*float64(time.Hour))).Unix(), 10)
}

func TestBlocks(t *testing.T) {
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	exempt := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"tier": "infra"}}}
	controller := true
	daemon := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: &controller}}}}
	short := func() Runtime { return Runtime{D: 30 * time.Minute, Known: true} }
	long := func() Runtime { return Runtime{D: 55 * time.Minute, Known: true} }
	tests := []struct {
		name     string
		pod      *v1.Pod
		node     *v1.Node
		runtime  func() Runtime
		noAware  bool
		want     bool
		wantText string
	}{
		{name: "no window", pod: plain, node: testNode("", "")},
		{name: "inside a window", pod: plain, node: testNode(interval(-1, 1), ""), want: true,
			wantText: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "before it, within avoidWithin", pod: plain, node: testNode(interval(1.5, 3), ""), want: true,
			wantText: "node's maintenance window opens at 2026-12-01T01:30:00Z (until 2026-12-01T03:00:00Z)"},
		{name: "before it, past avoidWithin", pod: plain, node: testNode(interval(2.5, 3), "")},
		{name: "after it", pod: plain, node: testNode(interval(-2, 0), "")},
		{name: "malformed: no window", pod: plain, node: testNode("soon", "")},
		{name: "exempt by the selector", pod: exempt, node: testNode(interval(-1, 1), "")},
		{name: "exempt DaemonSet pod", pod: daemon, node: testNode(interval(-1, 1), "")},
		{name: "runtime-aware pod that ends before the window", pod: plain, node: testNode(interval(1, 3), ""), runtime: short},
		{name: "runtime-aware pod that ends within the margin", pod: plain, node: testNode(interval(1, 3), ""), runtime: long, want: true,
			wantText: "node's maintenance window opens at 2026-12-01T01:00:00Z (until 2026-12-01T03:00:00Z)"},
		{name: "runtime unknown", pod: plain, node: testNode(interval(1, 3), ""), want: true,
			wantText: "node's maintenance window opens at 2026-12-01T01:00:00Z (until 2026-12-01T03:00:00Z)"},
		{name: "runtime known, look-ahead off", pod: plain, node: testNode(interval(1, 3), ""), runtime: short, noAware: true, want: true,
			wantText: "node's maintenance window opens at 2026-12-01T01:00:00Z (until 2026-12-01T03:00:00Z)"},
		{name: "an open window spares no runtime", pod: plain, node: testNode(interval(-1, 1), ""), runtime: short, want: true,
			wantText: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "both sources: the label's window", pod: plain, node: testNode(interval(5, 6), gkeAt(-0.5)), want: true,
			wantText: "node is in a maintenance window until 2026-12-01T00:30:00Z"},
		{name: "both sources: the annotation's window", pod: plain, node: testNode(interval(-1, 1), gkeAt(5)), want: true,
			wantText: "node is in a maintenance window until 2026-12-01T01:00:00Z"},
		{name: "both sources merged: the label's window extends the annotation's", pod: plain, node: testNode(interval(-1, 1), gkeAt(1)), want: true,
			wantText: "node is in a maintenance window until 2026-12-01T02:00:00Z"},
		{name: "both sources merged: the label's window inside the annotation's", pod: plain, node: testNode(interval(-1, 3), gkeAt(1)), want: true,
			wantText: "node is in a maintenance window until 2026-12-01T03:00:00Z"},
		{name: "both sources, neither near", pod: plain, node: testNode(interval(5, 6), gkeAt(7))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			args := testArgs()
			args.RuntimeAware = !tc.noAware
			c, err := New(args)
			if err != nil {
				t.Fatal(err)
			}
			blocked, until, reason := c.Blocks(logger, tc.pod, tc.node, now, tc.runtime)
			if blocked != tc.want || reason != tc.wantText {
				t.Errorf("Blocks = %v, %q; want %v, %q", blocked, reason, tc.want, tc.wantText)
			}
			// The end given is the one the reason names, and none when not blocked.
			if want := "until " + until.UTC().Format(time.RFC3339); blocked && !strings.Contains(reason, want) || !blocked && !until.IsZero() {
				t.Errorf("Blocks = %v until %v, reason %q", blocked, until, reason)
			}
		})
	}
}

// TestMergeKeepsCache: merging two sources' windows does not change the
// cached windows of either, which other nodes share.
func TestMergeKeepsCache(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	s := NewSources(testArgs())
	// Three windows: the cached slice has room to grow in place.
	shared := interval(5, 6) + "," + interval(8, 9) + "," + interval(10, 11)
	if got := len(s.Windows(logger, testNode(shared, gkeAt(-0.5)))); got != 4 {
		t.Fatalf("merged %d windows, want 4", got)
	}
	ws := s.Windows(logger, testNode(shared, ""))
	if _, ok := NextStart(ws, now); len(ws) != 3 || !ws[0].Start.Equal(now.Add(5*time.Hour)) || !ok {
		t.Errorf("the annotation's windows after a merge: %v, want the three from 5h", ws)
	}
}

// TestNewRejectsSelector: an invalid exemptPodSelector is an error naming
// the field.
func TestNewRejectsSelector(t *testing.T) {
	args := testArgs()
	args.ExemptPodSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	if _, err := New(args); err == nil {
		t.Fatal("New accepted an invalid exemptPodSelector")
	}
}

// TestGroupRuntime: the longest runtime of the group's members, unknown
// when one of theirs is; the pod itself is judged by rt.
func TestGroupRuntime(t *testing.T) {
	member := func(uid string, deadline int64) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)}}
		if deadline > 0 {
			p.Spec.ActiveDeadlineSeconds = &deadline
		}
		return p
	}
	self := Runtime{D: 20 * time.Minute, Known: true}
	tests := []struct {
		name    string
		rt      Runtime
		members []*v1.Pod
		want    Runtime
	}{
		{name: "alone", rt: self, members: []*v1.Pod{member("self", 0)}, want: self},
		{name: "a longer member", rt: self, members: []*v1.Pod{member("self", 0), member("b", 3600)}, want: Runtime{D: time.Hour, Known: true}},
		{name: "a shorter member", rt: self, members: []*v1.Pod{member("b", 60)}, want: self},
		{name: "a member of unknown runtime", rt: self, members: []*v1.Pod{member("b", 60), member("c", 0)}, want: Runtime{}},
		{name: "own runtime unknown", rt: Runtime{}, members: []*v1.Pod{member("b", 60)}, want: Runtime{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GroupRuntime(tc.rt, "self", tc.members); got != tc.want {
				t.Errorf("GroupRuntime = %+v, want %+v", got, tc.want)
			}
		})
	}
}
