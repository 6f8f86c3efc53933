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

package controller

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMakePlan: windows that overlap or touch are one; the next boundary
// is the soonest of start - ahead, start and end still to come.
func TestMakePlan(t *testing.T) {
	at := func(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }
	sp := func(from, to float64) span { return span{Start: at(from), End: at(to), Source: "annotation"} }
	for _, tt := range []struct {
		name          string
		spans         []span
		open, planned *span
		next          time.Time
	}{
		{name: "none"},
		{name: "past", spans: []span{sp(-3, -1)}},
		{name: "open", spans: []span{sp(-1, 1)}, open: &span{at(-1), at(1), "annotation"}, next: at(1)},
		{name: "touching windows are one", spans: []span{sp(1, 2), sp(-1, 1)}, open: &span{at(-1), at(2), "annotation"}, next: at(2)},
		{name: "planned within ahead", spans: []span{sp(2, 3)}, planned: &span{at(2), at(3), "annotation"}, next: at(2)},
		{name: "beyond ahead: next is start - ahead", spans: []span{sp(5, 6)}, next: at(2)},
		{name: "open, then planned", spans: []span{sp(-1, 1), sp(2, 3)}, open: &span{at(-1), at(1), "annotation"},
			planned: &span{at(2), at(3), "annotation"}, next: at(1)},
		{name: "no end", spans: []span{{Start: at(-1), Source: "k"}, sp(0, 9)}, open: &span{at(-1), time.Time{}, "k, annotation"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := makePlan(tt.spans, karpenterState{}, t0, 3*time.Hour)
			if !equalSpan(p.open, tt.open) || !equalSpan(p.planned, tt.planned) || !p.next.Equal(tt.next) {
				t.Errorf("open %v planned %v next %v, want %v %v %v", p.open, p.planned, p.next, tt.open, tt.planned, tt.next)
			}
		})
	}
}

func equalSpan(a, b *span) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Source == b.Source
}

// TestReconcileConditions: ours are set, updated and removed; another
// writer's are kept as they are and named.
func TestReconcileConditions(t *testing.T) {
	now := metav1.NewTime(t0)
	old := metav1.NewTime(t0.Add(-time.Hour))
	have := []v1.NodeCondition{
		{Type: v1.NodeReady, Status: v1.ConditionTrue},
		{Type: ConditionMaintenancePlanned, Status: v1.ConditionTrue, Reason: "Admin", LastTransitionTime: old},
		{Type: ConditionMaintenanceInProgress, Status: v1.ConditionTrue, Reason: ReasonOpen, Message: "old", LastTransitionTime: old},
	}
	want := []wanted{{ConditionMaintenanceInProgress, ReasonOpen, "new"}, {ConditionMaintenancePlanned, ReasonPlanned, "p"}}
	out, changed, refused := reconcileConditions(have, want, now)
	if !changed || len(out) != 3 || out[2].Message != "new" || !out[2].LastTransitionTime.Equal(&old) || out[1].Reason != "Admin" {
		t.Errorf("got %+v (changed %v)", out, changed)
	}
	if len(refused) != 1 || refused[0] != ConditionMaintenancePlanned {
		t.Errorf("refused %v, want MaintenancePlanned", refused)
	}
	if have[2].Message != "old" {
		t.Error("the input was changed")
	}
	out, changed, _ = reconcileConditions(have, nil, now)
	if !changed || len(out) != 2 || out[1].Reason != "Admin" {
		t.Errorf("removing ours: got %+v", out)
	}
	if _, changed, _ = reconcileConditions(out, nil, now); changed {
		t.Error("nothing to do, yet changed")
	}
}
