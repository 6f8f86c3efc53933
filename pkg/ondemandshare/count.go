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
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/workload"
)

// tally is what PreFilter found of an undecided pod's workload: n live
// replicas (the pod among them), of which onDemand are on on-demand nodes
// or decided on-demand, and required must be.
type tally struct {
	policy                *policy.Policy
	n, onDemand, required int32
	// reason is Filter's message for a node that is not on-demand, built
	// once per cycle rather than per node.
	reason string
}

// Clone returns t: it is never changed once written.
func (t *tally) Clone() fwk.StateData { return t }

// hold reports whether the pod must go on-demand.
func (t *tally) hold() bool { return t.onDemand < t.required }

// count tallies the workload k of pod under policy p. It costs one pass
// over the workload's pods, O(1) each through the owner indexes and the
// snapshot, plus, while other pods of the workload are undecided and
// unbound, a pass over the snapshot's on-demand nodes to find those the
// scheduler assumed there: the pod lister still shows them unbound.
func (pl *OnDemandShare) count(pod *v1.Pod, p *policy.Policy, k workload.Key) (*tally, error) {
	members, err := pl.members(k)
	if err != nil {
		return nil, err
	}
	t := &tally{policy: p}
	self := false
	var unbound sets.Set[types.UID]
	for _, m := range members {
		if !workload.Live(m) {
			continue
		}
		t.n++
		switch {
		case m.UID == pod.UID:
			self = true
		case m.Labels[share.ClassLabel] != "":
			if share.Class(m.Labels[share.ClassLabel]) == share.OnDemand {
				t.onDemand++
			}
		case m.Spec.NodeName != "":
			if pl.nodeClass(p, m.Spec.NodeName) == share.OnDemand {
				t.onDemand++
			}
		default:
			if unbound == nil {
				unbound = sets.New[types.UID]()
			}
			unbound.Insert(m.UID)
		}
	}
	if !self {
		// The informer has not shown the pod yet; it is a replica all the same.
		t.n++
	}
	if unbound.Len() > 0 {
		n, err := pl.assumedOnDemand(p, unbound)
		if err != nil {
			return nil, err
		}
		t.onDemand += n
	}
	t.required = p.Required(t.n)
	t.reason = fmt.Sprintf("node(s) are not on-demand: policy %q has %d/%d replicas on-demand", p.Name, t.onDemand, t.required)
	return t, nil
}

// members lists the pods of workload k from the owner indexes: a
// Deployment's through its ReplicaSets, any other workload's directly.
func (pl *OnDemandShare) members(k workload.Key) ([]*v1.Pod, error) {
	owners := []types.UID{k.UID}
	if k.Kind == config.WorkloadDeployment {
		rss, err := pl.rsByOwner.ByIndex(workload.ControllerIndex, string(k.UID))
		if err != nil {
			return nil, err
		}
		owners = owners[:0]
		for _, obj := range rss {
			if rs, ok := obj.(metav1.Object); ok {
				owners = append(owners, rs.GetUID())
			}
		}
	}
	var pods []*v1.Pod
	for _, uid := range owners {
		objs, err := pl.podsByOwner.ByIndex(workload.ControllerIndex, string(uid))
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if pod, ok := obj.(*v1.Pod); ok {
				pods = append(pods, pod)
			}
		}
	}
	return pods, nil
}

// nodeClass is the class of the node named name in the cycle's snapshot; ""
// for a node the snapshot does not hold or that is of neither class.
func (pl *OnDemandShare) nodeClass(p *policy.Policy, name string) share.Class {
	ni, err := pl.snapshot.NodeInfos().Get(name)
	if err != nil || ni.Node() == nil {
		return ""
	}
	c, _ := p.NodeClass(ni.Node())
	return c
}

// assumedOnDemand counts the pods of unbound that the snapshot holds on an
// on-demand node: the scheduler assumed them there and is binding them.
func (pl *OnDemandShare) assumedOnDemand(p *policy.Policy, unbound sets.Set[types.UID]) (int32, error) {
	nodes, err := pl.snapshot.NodeInfos().List()
	if err != nil {
		return 0, err
	}
	var n int32
	for _, ni := range nodes {
		if ni.Node() == nil {
			continue
		}
		if c, _ := p.NodeClass(ni.Node()); c != share.OnDemand {
			continue
		}
		for _, pi := range ni.GetPods() {
			if unbound.Has(pi.GetPod().UID) {
				unbound.Delete(pi.GetPod().UID)
				n++
				if unbound.Len() == 0 {
					return n, nil
				}
			}
		}
	}
	return n, nil
}
