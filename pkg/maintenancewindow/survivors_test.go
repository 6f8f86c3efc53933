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

// Tests for behaviours that the mutants surviving the gremlins run of
// doc/mutation-testing.md showed untested. Each says what it guards.

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
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// TestRetryOnlyForTheInformersPod guards pending's UID check: a pod
// deleted and recreated under the same name is not the one the informer
// holds, and gets no retry.
func TestRetryOnlyForTheInformersPod(t *testing.T) {
	tests := []struct {
		name     string
		informer *v1.Pod // what the pod informer holds under default/p
		want     int
	}{
		{name: "the same pod", informer: pendingPod("p"), want: 1},
		{name: "recreated under the same name", informer: st.MakePod().Name("p").Namespace("default").UID("p-new").Obj(), want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			nodes := []*v1.Node{node("a", interval(-1, 1))}
			pl, _, h := newPlugin(t, defaultArgs(nil), nodes...)
			h.addPod(t, tc.informer)
			reject(t, ctx, pl, pendingPod("p"), false, nodes)
			if got := pl.pendingRetries(); got != tc.want {
				t.Errorf("%d retries planned, want %d", got, tc.want)
			}
		})
	}
}

// TestOnUpdateDropsOnlyOnSettling guards onUpdate: only the transition from
// pending to bound or finished drops a retry; other updates of a pending
// pod (status, labels) keep it, and a non-pod object is ignored.
func TestOnUpdateDropsOnlyOnSettling(t *testing.T) {
	pending := pendingPod("p")
	labelled := pendingPod("p")
	labelled.Labels = map[string]string{"app": "x"}
	bound := pendingPod("p")
	bound.Spec.NodeName = "b"
	tests := []struct {
		name     string
		old, new any
		want     int
	}{
		{name: "labels changed, still pending", old: pending, new: labelled, want: 1},
		{name: "bound", old: pending, new: bound, want: 0},
		{name: "settled already: not the transition", old: bound, new: bound, want: 1},
		{name: "old object not a pod", old: "not a pod", new: bound, want: 1},
		{name: "new object not a pod", old: pending, new: "not a pod", want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			nodes := []*v1.Node{node("a", interval(-1, 1))}
			pl, _, h := newPlugin(t, defaultArgs(nil), nodes...)
			h.addPod(t, pendingPod("p"))
			reject(t, ctx, pl, pendingPod("p"), false, nodes)
			if n := pl.pendingRetries(); n != 1 {
				t.Fatalf("%d retries planned after the rejection, want 1", n)
			}
			pl.retries.onUpdate(tc.old, tc.new)
			if got := pl.pendingRetries(); got != tc.want {
				t.Errorf("%d retries kept, want %d", got, tc.want)
			}
		})
	}
}

// TestActivateOnlyWithDuePods guards run: Activate, which takes the
// scheduling queue's lock, is called only when some pod is due, not on
// every wake-up of the loop.
func TestActivateOnlyWithDuePods(t *testing.T) {
	tests := []struct {
		name string
		pods []string
	}{
		{name: "one pod", pods: []string{"p"}},
		{name: "two pods", pods: []string{"p", "q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			nodes := []*v1.Node{node("a", interval(-1, 1))}
			pl, clk, h := newPlugin(t, defaultArgs(nil), nodes...)
			var want []string
			for _, name := range tc.pods {
				h.addPod(t, pendingPod(name))
				reject(t, ctx, pl, pendingPod(name), false, nodes)
				want = append(want, "default/"+name)
			}
			end := now.Add(time.Hour)
			waitArmed(t, pl, end)
			clk.SetTime(end)
			if err := waitFor(func() bool { return len(h.activations()) == len(want) }); err != nil {
				t.Fatalf("activated %v, want %v", h.activations(), want)
			}
			if diff := cmp.Diff(want, h.activations()); diff != "" {
				t.Errorf("activated (-want +got):\n%s", diff)
			}
			if n := h.emptyActivations(); n != 0 {
				t.Errorf("%d Activate calls without a pod, want 0", n)
			}
		})
	}
}

// TestNoRetryQueueWithoutInformer guards newRetryQueue's check of the
// handle: without a handle or an informer factory there is no queue, and
// no panic.
func TestNoRetryQueueWithoutInformer(t *testing.T) {
	tests := []struct {
		name string
		h    fwk.Handle
	}{
		{name: "no handle", h: nil},
		{name: "no informer factory", h: &fakeHandle{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			if q := newRetryQueue(ctx, tc.h, testingclock.NewFakeClock(now), newRetryMetrics(t.Name())); q != nil {
				t.Errorf("got a retry queue, want none")
			}
		})
	}
}

// TestPreFilterStateOnlyWithRetries guards PreFilter: the cycle gets an
// earliestEnd only when there is a retry queue to spare the lock of.
func TestPreFilterStateOnlyWithRetries(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	withRetries, _, _ := newPlugin(t, defaultArgs(nil), node("n", interval(-1, 1)))
	withoutRetries, err := newWithClock(ctx, defaultArgs(nil), &fakeHandle{}, testingclock.NewFakeClock(now))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pl   *MaintenanceWindow
		want bool
	}{
		{name: "retries on", pl: withRetries, want: true},
		{name: "retries off", pl: withoutRetries, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if _, status := tc.pl.PreFilter(ctx, state, pendingPod("p"), nil); !status.IsSuccess() {
				t.Fatalf("PreFilter: %v", status)
			}
			_, err := state.Read(stateKey)
			if got := err == nil; got != tc.want {
				t.Errorf("state written: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEarliestEndLower guards lower: an end equal to one seen already is
// not earlier, so the cycle does not take the retry queue's lock again.
func TestEarliestEndLower(t *testing.T) {
	tests := []struct {
		name  string
		times []time.Duration // after now
		want  []bool
	}{
		{name: "first", times: []time.Duration{time.Hour}, want: []bool{true}},
		{name: "equal", times: []time.Duration{time.Hour, time.Hour}, want: []bool{true, false}},
		{name: "earlier then later", times: []time.Duration{time.Hour, time.Minute, time.Hour}, want: []bool{true, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e earliestEnd
			var got []bool
			for _, d := range tc.times {
				got = append(got, e.lower(now.Add(d)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lower (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNextStart guards nextStart's skipping of past windows: a window that
// has ended does not hide the next one.
func TestNextStart(t *testing.T) {
	tests := []struct {
		name   string
		value  string
		want   time.Duration
		wantOK bool
	}{
		{name: "none", value: "", want: 0, wantOK: false},
		{name: "past only", value: interval(-3, -2), want: 0, wantOK: false},
		{name: "past, then one in 5h", value: interval(-3, -2) + "," + interval(5, 6), want: 5 * time.Hour, wantOK: true},
		{name: "past, then one open", value: interval(-3, -2) + "," + interval(-1, 1), want: 0, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := window.Parse(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := window.NextStart(ws, now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestQueueingHintNilOldNode guards the hint's check of the old object: a
// nil *v1.Node counts as no old node, it does not panic.
func TestQueueingHintNilOldNode(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl, _, _ := newPlugin(t, defaultArgs(nil))
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	tests := []struct {
		name string
		old  any
		want fwk.QueueingHint
	}{
		{name: "nil *v1.Node", old: (*v1.Node)(nil), want: fwk.Queue},
		{name: "not a node", old: pod, want: fwk.Queue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterNodeChange(logger, pod, tc.old, node("n", ""))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNormalizeScoreSubSecondHorizon guards NormalizeScore's horizon check:
// a horizon under a second passes validation and PreScore but is 0 in
// seconds, and must give MaxScore, not divide by zero.
func TestNormalizeScoreSubSecondHorizon(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tests := []struct {
		name    string
		horizon time.Duration
		want    int64
	}{
		{name: "half a second", horizon: 500 * time.Millisecond, want: fwk.MaxNodeScore},
		{name: "one second", horizon: time.Second, want: fwk.MinNodeScore},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, _, _ := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.Horizon.Duration = tc.horizon }), node("open", interval(-1, 1)))
			pod := st.MakePod().Name("p").Namespace("default").Obj()
			if status := pl.PreScore(ctx, nil, pod, nil); !status.IsSuccess() {
				t.Fatalf("PreScore: %v", status)
			}
			scores := fwk.NodeScoreList{{Name: "open", Score: 0}}
			if status := pl.NormalizeScore(ctx, nil, pod, scores); !status.IsSuccess() {
				t.Fatalf("NormalizeScore: %v", status)
			}
			if scores[0].Score != tc.want {
				t.Errorf("score %d, want %d", scores[0].Score, tc.want)
			}
		})
	}
}

// TestCleanStopLogsNothing guards the stop of the retries and of the node
// count: removing the pod and node event handlers from a running informer
// succeeds, and a success is not logged as a failure to remove it.
func TestCleanStopLogsNothing(t *testing.T) {
	tests := []struct {
		name      string
		verbosity int
	}{
		{name: "at V(4)", verbosity: 4},
		{name: "at V(5)", verbosity: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buffered := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(tc.verbosity), ktesting.BufferLogs(true)))
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), buffered))
			pl, _, _ := newPluginCtx(t, ctx, defaultArgs(nil))
			cancel()
			<-retriesDone(pl)
			<-pl.signals.done
			for _, e := range buffered.GetSink().(ktesting.Underlier).GetBuffer().Data() {
				if e.Message == "Removing the pod event handler" || e.Message == "Removing the node event handler" {
					t.Errorf("logged %q with %v on a clean stop", e.Message, e.ParameterKVList)
				}
			}
		})
	}
}
