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

package ondemandshare

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// stateKey is where PreFilter leaves an undecided pod's tally for Filter,
// PreScore, Score and PostBind.
const stateKey fwk.StateKey = Name

// PreFilter skips the pods no policy selects and the decided ones. For an
// undecided pod it counts the workload's on-demand replicas and leaves the
// tally in the cycle state; Filter runs only when the pod must go
// on-demand, so otherwise it returns Skip too.
func (pl *OnDemandShare) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	t, err := pl.tallyFor(pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if t == nil {
		return nil, &pl.skip
	}
	state.Write(stateKey, t)
	if logger := klog.FromContext(ctx).V(4); logger.Enabled() {
		logger.Info("Undecided pod of an on-demand share", "pod", klog.KObj(pod), "policy", t.policy.Name,
			"replicas", t.n, "onDemand", t.onDemand, "required", t.required, "holdOnDemand", t.hold())
	}
	if !t.hold() {
		return nil, &pl.skip
	}
	return nil, nil
}

// PreFilterExtensions returns nil: the tally holds for the whole cycle.
// Preemption's dry runs are not recounted; a victim of the pod's own
// workload is rare (same priority), and the next cycle counts it gone.
func (pl *OnDemandShare) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// tallyFor returns the tally of pod, nil for a pod the plugin leaves alone.
func (pl *OnDemandShare) tallyFor(pod *v1.Pod) (*tally, error) {
	p, k, err := pl.policyFor(pod)
	if err != nil || p == nil {
		return nil, err
	}
	return pl.count(pod, p, k)
}

// cycleTally returns the tally PreFilter wrote, or computes it where
// PreFilter did not run (a profile may enable the plugin at score only).
func (pl *OnDemandShare) cycleTally(state fwk.CycleState, pod *v1.Pod) (*tally, error) {
	if state != nil {
		if d, err := state.Read(stateKey); err == nil {
			t, ok := d.(*tally)
			if !ok {
				return nil, fmt.Errorf("%s: cycle state holds %T", Name, d)
			}
			return t, nil
		}
	}
	return pl.tallyFor(pod)
}

// Filter admits only on-demand nodes for a pod whose workload is below its
// policy's minimum. Preemption cannot change a node's class: the rejection
// is unresolvable.
func (pl *OnDemandShare) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	t, err := pl.cycleTally(state, pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if t == nil || !t.hold() {
		return nil
	}
	if c, _ := t.policy.NodeClass(node); c != share.OnDemand {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, t.reason)
	}
	return nil
}
