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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
)

// TestRetryFollowsTheNodeEvent checks that a node event which leaves the
// pod blocked still brings its retry to the end of the window the event
// shows: the queueing hint skips the pod, so nothing else would, and the
// pod would wait for the scheduler's 5-minute flush.
func TestRetryFollowsTheNodeEvent(t *testing.T) {
	tests := []struct {
		name string
		// before is the node the pod was rejected on, nil when the pod was
		// never rejected on it.
		before *v1.Node
		after  *v1.Node
		end    time.Duration // the retry is due then
	}{
		{
			name:   "a window shortened on the node that rejected the pod",
			before: node("a", interval(-1, 2)),
			after:  node("a", interval(-1, 0.5)),
			end:    30 * time.Minute,
		},
		{
			name:  "a node added during its own window",
			after: node("b", interval(-1, 1)),
			end:   time.Hour,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, ctx := ktesting.NewTestContext(t)
			var nodes []*v1.Node
			if tc.before != nil {
				nodes = append(nodes, tc.before)
			}
			pl, clk, h := newPlugin(t, defaultArgs(nil), nodes...)
			pod := pendingPod("p")
			h.addPod(t, pod)
			if tc.before != nil {
				reject(t, ctx, pl, pod, false, nodes)
			}

			var old any
			if tc.before != nil {
				old = tc.before
			}
			hint, err := pl.isSchedulableAfterNodeChange(logger, pod, old, tc.after)
			if err != nil || hint != fwk.QueueSkip {
				t.Fatalf("hint: got %v, %v; want QueueSkip: the node still blocks the pod", hint, err)
			}
			waitArmed(t, pl, now.Add(tc.end))
			clk.Step(tc.end - time.Second)
			if got := h.activations(); len(got) != 0 {
				t.Fatalf("activated a second before the window ended: %v", got)
			}
			clk.Step(time.Second)
			if err := waitFor(func() bool { return len(h.activations()) > 0 }); err != nil {
				t.Fatal("the pod was not activated when the window the event shows ended")
			}
			if diff := cmp.Diff([]string{"default/p"}, h.activations()); diff != "" {
				t.Errorf("activated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHintPlansNoRetryForAnotherWindow checks that an event on a node
// whose window ends later than the planned retry leaves it where it is.
func TestHintPlansNoRetryForAnotherWindow(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	a := node("a", interval(-1, 1))
	pl, _, h := newPlugin(t, defaultArgs(nil), a)
	pod := pendingPod("p")
	h.addPod(t, pod)
	reject(t, ctx, pl, pod, false, []*v1.Node{a})
	waitArmed(t, pl, now.Add(time.Hour))

	if _, err := pl.isSchedulableAfterNodeChange(logger, pod, nil, node("b", interval(-1, 3))); err != nil {
		t.Fatal(err)
	}
	waitArmed(t, pl, now.Add(time.Hour))
	if n := pl.pendingRetries(); n != 1 {
		t.Errorf("%d retries planned, want 1", n)
	}
}

// TestHintPlansNoRetryWithoutAnEnd checks that a node added with a
// lifecycle condition, whose block has no known end, plans no retry: the
// condition's update queues the pod when it is cleared.
func TestHintPlansNoRetryWithoutAnEnd(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl, _, h := newPlugin(t, defaultArgs(nil))
	pod := pendingPod("p")
	h.addPod(t, pod)
	drain := conditionNode("d", "", "DrainInProgress")
	hint, err := pl.isSchedulableAfterNodeChange(logger, pod, nil, drain)
	if err != nil || hint != fwk.QueueSkip {
		t.Fatalf("hint on a draining node: got %v, %v; want QueueSkip", hint, err)
	}
	if n := pl.pendingRetries(); n != 0 {
		t.Errorf("%d retries planned for a block without an end, want 0", n)
	}
	cleared := conditionNode("d", "", "")
	if hint, err := pl.isSchedulableAfterNodeChange(logger, pod, drain, cleared); err != nil || hint != fwk.Queue {
		t.Errorf("condition cleared: got %v, %v; want Queue", hint, err)
	}
}
