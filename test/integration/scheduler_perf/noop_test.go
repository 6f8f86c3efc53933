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

package schedulerperf

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// noOpSkipName is a plugin of this test binary only: its PreFilter and
// PreScore return Skip and do nothing else. Its execution time in the
// framework's metric is what the metric itself costs a plugin at that place
// of the profile, the floor PlacementPolicy's no-rule path is compared with
// (the NoOpSkipFirst and NoOpSkipSecond cases). NoOpLabelSkip does the same
// after one lookup in the pod's labels, the one read PlacementPolicy's gate
// makes that NodeAffinity's skip does not (the NoOpLabelSkip case).
const (
	noOpSkipName      = "NoOpSkip"
	noOpLabelSkipName = "NoOpLabelSkip"
	noOpScoreName     = "NoOpScore"
	// naSkipName makes NodeAffinity's PreFilter decision for a pod
	// without node affinity, with the same reads and the same allocated
	// Skip status, at the place of the profile where it is enabled: with
	// it after PlacementPolicy, the reference NodeAffinity is measured
	// at PlacementPolicy's place too, not only at its own near the front.
	naSkipName = "NodeAffinitySkipLast"
)

// naSkip holds the two fields NodeAffinity's PreFilter reads before its
// skip.
type naSkip struct {
	resizeDeferredSkips bool
	addedNodeSelector   *v1.NodeSelector
}

func (*naSkip) Name() string { return naSkipName }

func (p *naSkip) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if p.resizeDeferredSkips { // false: InPlacePodVerticalScalingSchedulerPreemption is off here
		return nil, fwk.NewStatus(fwk.Skip)
	}
	a := pod.Spec.Affinity
	if (a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil) &&
		p.addedNodeSelector == nil && pod.Spec.NodeSelector == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

func (*naSkip) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

type noOpSkip struct {
	name string
	skip *fwk.Status
	// label, when set, is looked up in the pod's labels first; a pod that
	// has it is not skipped.
	label string
}

func (p noOpSkip) Name() string { return p.name }

func (p noOpSkip) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if p.label != "" {
		if _, ok := pod.Labels[p.label]; ok {
			return nil, nil
		}
	}
	return nil, p.skip
}

func (noOpSkip) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func (p noOpSkip) PreScore(context.Context, fwk.CycleState, *v1.Pod, []fwk.NodeInfo) *fwk.Status {
	return p.skip
}

// noOpScore scores every node 0 and does nothing else: the floor of a Score
// call as the framework measures it (the clock around the call, the call
// through the interface), next to the plugins it is enabled with.
type noOpScore struct{}

func (*noOpScore) Name() string { return noOpScoreName }

func (*noOpScore) Score(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func (*noOpScore) ScoreExtensions() fwk.ScoreExtensions { return nil }

func init() {
	registry[noOpScoreName] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return &noOpScore{}, nil
	}
	registry[naSkipName] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return &naSkip{}, nil
	}
	registry[noOpSkipName] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return noOpSkip{name: noOpSkipName, skip: fwk.NewStatus(fwk.Skip)}, nil
	}
	registry[noOpLabelSkipName] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return noOpSkip{name: noOpLabelSkipName, skip: fwk.NewStatus(fwk.Skip), label: "placement"}, nil
	}
}
