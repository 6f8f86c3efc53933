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

package placementpolicy

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// This file holds what the framework calls for a pod no rule selects, and
// nothing else: Name (the framework calls it inside the timed region of
// every PreFilter and PreScore), PreFilter's and PreScore's no-rule paths.
// The compiler emits a package's functions in the order of its files and
// of the functions in them, so these three sit next to each other at the
// start of the package's code, a few hundred bytes: one page of code for
// the instruction TLB, where they were spread over three pages before.
// Between two of our calls the other plugins walk hundreds of nodes, so
// our code is likely out of the caches (inferred from time: the VM it was
// measured on has no performance counters). The rule paths are functions
// of their own, elsewhere.

// Name returns the plugin's name.
func (pl *PlacementPolicy) Name() string { return Name }

// PreFilter finds the rules that apply to the pod, once per cycle. Without a
// Require rule, Filter has nothing to do: it returns Skip. The common gate
// is decided inline (oneKey), the others by mayApply's call.
func (pl *PlacementPolicy) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	applies, decided := pl.gate.oneKey(pod)
	if !decided {
		applies = pl.gate.mayApply(pod)
	}
	if !applies {
		if pl.stopped != pod {
			pl.stopped = pod
		}
		return nil, &pl.skip
	}
	return pl.preFilterRules(ctx, state, pod)
}

// PreScore returns Skip unless a Prefer rule applies to the pod, so that
// Score and NormalizeScore run only for the pods the plugin concerns. When
// PreFilter did not find the rules (a profile that enables the plugin at
// score only), PreScore counts the attempt for them.
func (pl *PlacementPolicy) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if pl.stopped == pod {
		return &pl.skip
	}
	return pl.preScoreRules(state, pod)
}
