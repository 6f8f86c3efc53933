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
	"cmp"
	"encoding/json"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/quota"
)

// view is what one sync plans from: the caches' objects at one moment.
type view struct {
	quotas []*v1alpha1.NodePoolQuota
	nodes  []*v1.Node
	// namespaces are the known namespaces' labels.
	namespaces map[string]labels.Set
	// pods are the pods of the teams' namespaces and every gated pod.
	pods []*v1.Pod
	// gated says whether a pod still carries the gate: false for a pod
	// whose gate this controller lifted but the cache has not seen go.
	gated func(*v1.Pod) bool
	// invalid is why a quota is not in force, or "".
	invalid func(*v1alpha1.NodePoolQuota) string
}

// pool is one NodePoolQuota as a sync found it.
type pool struct {
	obj *v1alpha1.NodePoolQuota
	// q is nil when the quota is invalid: it holds no pod then.
	q       *quota.Quota
	invalid string
	inPool  map[string]bool
	// Per team, per limit in the order of Team.Limits: what its pods bound
	// to the pool's nodes request, and what its pool-bound pods that are
	// not gated but not yet bound request (they will land in the pool).
	used, reserved [][]int64
	// held counts, per team, the gated pods kept; why is the message of
	// the team's first.
	held []int32
	why  []string
	// missing are the limited resources no node of the pool offers;
	// overlaps say which teams another quota limits on the same nodes.
	missing  []v1.ResourceName
	overlaps []string
	// boundBySelection remembers, for this plan, whether a node selection
	// (selectionKey) is pool-bound: a workload's pods share theirs, and
	// deciding it may test every node.
	boundBySelection map[string]bool
}

// hold is a gated pod kept, and the first limit it would break.
type hold struct {
	pod     *v1.Pod
	message string
}

// plan is what a sync does: the gates to lift, the pods held, and each
// pool's usage for its status and metrics.
type plan struct {
	pools []*pool
	lift  []*v1.Pod
	hold  []hold
}

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// makePlan decides, for every gated pod in creation order, whether its
// gate goes. A pod that is pool-bound for a quota goes only when its
// team's usage, plus what the team's ungated pods on their way to the pool
// reserve, plus its requests stay within every limit; what it asks for is
// then reserved, so that a burst never ungates more than the quota. A pod
// under several quotas goes only when each of them lets it.
func makePlan(in *view) *plan {
	p := &plan{}
	for _, q := range in.quotas {
		pl := newPool(q, in)
		pl.missing = pl.notOffered(in.nodes)
		p.pools = append(p.pools, pl)
	}
	overlaps(p.pools, in.namespaces)
	var gated []*v1.Pod
	for _, pod := range in.pods {
		if terminal(pod) {
			continue
		}
		if in.gated(pod) {
			if pod.DeletionTimestamp == nil {
				gated = append(gated, pod)
			}
			continue
		}
		for _, pl := range p.pools {
			t, team := pl.team(pod, in)
			if team == nil {
				continue
			}
			switch {
			case pod.Spec.NodeName != "":
				if pl.inPool[pod.Spec.NodeName] {
					add(pl.used[t], quota.Requests(pod, team))
				}
			case pod.DeletionTimestamp == nil && pl.bound(pod, in):
				add(pl.reserved[t], quota.Requests(pod, team))
			}
		}
	}
	slices.SortFunc(gated, func(a, b *v1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	type charge struct {
		pl  *pool
		t   int
		req []int64
	}
	for _, pod := range gated {
		var charges []charge
		message := ""
		for _, pl := range p.pools {
			t, team := pl.team(pod, in)
			if team == nil || !pl.bound(pod, in) {
				continue
			}
			req := quota.Requests(pod, team)
			sum := make([]int64, len(req))
			for i := range req {
				sum[i] = pl.used[t][i] + pl.reserved[t][i]
			}
			if i := quota.Exceeded(team, sum, req); i >= 0 {
				msg := quota.Message(pl.q.Name, team, i, sum, req)
				if pl.held[t] == 0 {
					pl.why[t] = msg
				}
				pl.held[t]++
				if message == "" {
					message = msg
				}
				continue
			}
			charges = append(charges, charge{pl, t, req})
		}
		if message != "" {
			p.hold = append(p.hold, hold{pod: pod, message: message})
			continue
		}
		for _, c := range charges {
			add(c.pl.reserved[c.t], c.req)
		}
		p.lift = append(p.lift, pod)
	}
	return p
}

func newPool(obj *v1alpha1.NodePoolQuota, in *view) *pool {
	pl := &pool{obj: obj, inPool: map[string]bool{}, boundBySelection: map[string]bool{}}
	if pl.invalid = in.invalid(obj); pl.invalid != "" {
		return pl
	}
	q, err := quota.Compile(obj)
	if err != nil {
		pl.invalid = err.Error()
		return pl
	}
	pl.q = q
	for _, n := range in.nodes {
		if q.InPool(n.Labels) {
			pl.inPool[n.Name] = true
		}
	}
	for _, t := range q.Teams {
		pl.used = append(pl.used, make([]int64, len(t.Limits)))
		pl.reserved = append(pl.reserved, make([]int64, len(t.Limits)))
	}
	pl.held = make([]int32, len(q.Teams))
	pl.why = make([]string, len(q.Teams))
	return pl
}

// team is the index and team of pod in the pool's quota, or nil.
func (pl *pool) team(pod *v1.Pod, in *view) (int, *quota.Team) {
	if pl.q == nil {
		return -1, nil
	}
	t := pl.q.TeamOf(pod.Namespace, in.namespaces[pod.Namespace])
	if t < 0 {
		return -1, nil
	}
	return t, &pl.q.Teams[t]
}

func (pl *pool) bound(pod *v1.Pod, in *view) bool {
	key, ok := selectionKey(pod)
	if b, seen := pl.boundBySelection[key]; ok && seen {
		return b
	}
	b := poolBound(pod, pl.obj.Spec.NodeSelector.MatchLabels, in.nodes, func(n *v1.Node) bool { return pl.inPool[n.Name] })
	if ok {
		pl.boundBySelection[key] = b
	}
	return b
}

// selectionKey is pod's required node selection (nodeSelector and required
// node affinity) as a string; ok is false if it has none that can be
// written (it then goes unremembered).
func selectionKey(pod *v1.Pod) (key string, ok bool) {
	selection := struct {
		NodeSelector map[string]string `json:"s,omitempty"`
		Required     *v1.NodeSelector  `json:"r,omitempty"`
	}{NodeSelector: pod.Spec.NodeSelector}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		selection.Required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	// encoding/json writes map keys sorted: one selection, one key.
	b, err := json.Marshal(selection)
	return string(b), err == nil
}

func add(sum, req []int64) {
	for i := range req {
		sum[i] += req[i]
	}
}
