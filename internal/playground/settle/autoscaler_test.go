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

package settle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestIdleTracker: Karpenter is idle only when nothing changed for two
// provisioning passes (or Quiet) with no NodeClaim launching, and the
// verdict held for Confirm; any change starts over.
func TestIdleTracker(t *testing.T) {
	rule := IdleRule{Passes: 2, MinQuiet: 10 * time.Second, Quiet: 30 * time.Second, Confirm: time.Second}
	pending := autoscalerState{Unbound: 4}
	launching := autoscalerState{Claims: 1, Launching: 1, Unbound: 4}
	launched := autoscalerState{Claims: 1, Unbound: 4}
	type look struct {
		at     time.Duration
		state  autoscalerState
		passes float64
	}
	for _, tt := range []struct {
		name  string
		looks []look
		want  []bool
	}{
		{name: "one pass is not enough: it may have started before the change",
			looks: []look{{0, pending, 5}, {2 * time.Second, pending, 6}, {4 * time.Second, pending, 6}},
			want:  []bool{false, false, false}},
		{name: "two passes, confirmed a second later",
			looks: []look{{0, pending, 5}, {10 * time.Second, pending, 7}, {10500 * time.Millisecond, pending, 7}, {11 * time.Second, pending, 7}},
			want:  []bool{false, false, false, true}},
		{name: "two passes back to back are not enough before MinQuiet (TestPlayKarpenterDefaultNodePool flaked so in CI)",
			looks: []look{{0, pending, 5}, {time.Second, pending, 7}, {2 * time.Second, pending, 7}, {10 * time.Second, pending, 7}, {11 * time.Second, pending, 7}},
			want:  []bool{false, false, false, false, true}},
		{name: "a NodeClaim made after the pass is counted starts over",
			looks: []look{{0, pending, 5}, {10 * time.Second, pending, 7}, {10500 * time.Millisecond, launching, 7}, {20 * time.Second, launching, 9}},
			want:  []bool{false, false, false, false}},
		{name: "launched: two passes after the node was Ready",
			looks: []look{{0, launching, 5}, {2 * time.Second, launched, 6}, {12 * time.Second, launched, 7}, {22 * time.Second, launched, 8}, {23 * time.Second, launched, 8}},
			want:  []bool{false, false, false, false, true}},
		{name: "a claim launching is never idle, however long",
			looks: []look{{0, launching, 5}, {time.Minute, launching, 20}, {2 * time.Minute, launching, 30}},
			want:  []bool{false, false, false}},
		{name: "no pass at all: idle after Quiet",
			looks: []look{{0, pending, 0}, {29 * time.Second, pending, 0}, {30 * time.Second, pending, 0}, {31 * time.Second, pending, 0}},
			want:  []bool{false, false, false, true}},
		{name: "counters anew (Karpenter restarted) start over",
			looks: []look{{0, pending, 5}, {10 * time.Second, pending, 1}, {20 * time.Second, pending, 2}, {21 * time.Second, pending, 2}},
			want:  []bool{false, false, false, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := idleTracker{rule: rule}
			start := time.Unix(1e9, 0)
			var got []bool
			for _, l := range tt.looks {
				got = append(got, tr.observe(start.Add(l.at), l.state, l.passes))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("idle per look (-want +got):\n%s", diff)
			}
		})
	}
}
