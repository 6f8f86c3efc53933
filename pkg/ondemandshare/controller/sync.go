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
	"context"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// sync decides the gated pods of one workload (kep/46-on-demand-share/README.md
// §6b-6c). The pods are the ledger: decided slots come from their labels,
// plus the expectations of writes the cache does not show yet.
func (c *Controller) sync(ctx context.Context, key Key) error {
	members, redirect, err := c.membersOf(key)
	if err != nil {
		return err
	}
	if redirect != nil {
		c.queue.Add(*redirect)
		return nil
	}
	pending := make(map[types.UID]bool, len(members))
	for _, m := range members {
		pending[m.pod.UID] = isActive(m.pod) && m.pod.Labels[share.SlotLabel] == ""
	}
	c.exp.observe(key, func(uid types.UID) bool { return pending[uid] })

	p := c.policies[key.Policy]
	switch {
	case p == nil:
		return c.ungateAll(ctx, key, members, ReasonUnknownPolicy, "no policy %q is configured", key.Policy)
	case !p.Kinds.Has(config.WorkloadKind(key.Kind)):
		return c.ungateAll(ctx, key, members, ReasonNotCounted, "policy %s counts %s, not %s", key.Policy, kindList(sets.List(p.Kinds)), key.Kind)
	}
	if len(members) == 0 {
		c.state.drop(key)
		forgetShare(key)
		return nil
	}
	recordShare(key, p.Required, members)
	st := c.state.get(key)
	st.prune(members)
	st.holdFallbacks(members)
	wake, err := c.expireSpotWaits(ctx, p, st, members)
	if err != nil {
		return err
	}
	spaces := map[types.UID][]member{}
	var order []types.UID
	for _, m := range members {
		if _, ok := spaces[m.space]; !ok {
			order = append(order, m.space)
		}
		spaces[m.space] = append(spaces[m.space], m)
	}
	slices.Sort(order)
	for _, space := range order {
		if err := c.decideSpace(ctx, key, p, st, space, spaces[space]); err != nil {
			return err
		}
	}
	next, err := c.recoverSpot(ctx, p, st, members)
	if wake = earliest(wake, next); !wake.IsZero() {
		c.queue.AddAfter(key, wake.Sub(c.clock.Now()))
	}
	if c.onWake != nil {
		c.onWake(key, wake)
	}
	return err
}

// ungateAll ungates every gated pod of a workload no policy counts.
func (c *Controller) ungateAll(ctx context.Context, key Key, members []member, reason, format string, args ...any) error {
	for _, m := range members {
		if hasGate(m.pod) {
			if err := c.ungate(ctx, key, m.pod, reason, format, args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// decideSpace decides the gated pods of one slot space in creation order:
// each takes its fixed slot (StatefulSet ordinal, Indexed Job index) or the
// lowest free one, and that slot's class. A pod that requires a class itself
// takes the lowest free slot of that class.
func (c *Controller) decideSpace(ctx context.Context, key Key, p *policy.Policy, st *workloadState, space types.UID, members []member) error {
	taken := map[int32]bool{}
	var gated []member
	for _, m := range members {
		if !isActive(m.pod) {
			continue
		}
		if slot, err := strconv.ParseInt(m.pod.Labels[share.SlotLabel], 10, 32); err == nil {
			taken[int32(slot)] = true
		} else if hasGate(m.pod) && !c.exp.has(key, m.pod.UID) {
			gated = append(gated, m)
		}
	}
	c.exp.taken(key, space, taken)
	slices.SortFunc(gated, func(a, b member) int {
		if c := a.pod.CreationTimestamp.Compare(b.pod.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.pod.Name, b.pod.Name)
	})
	for _, m := range gated {
		if err := ctx.Err(); err != nil {
			return err // stopping (a lost lease): write nothing more
		}
		own, hasOwn := ownClass(p, m.pod)
		slot := fixedSlot(key.Kind, m.pod)
		if slot == 0 {
			slot = share.LowestFreeSlot(func(s int32) bool { return taken[s] || hasOwn && p.SlotClass(s) != own })
		}
		class := p.SlotClass(slot)
		if hasOwn {
			class = own
		}
		k := slotKey{space, slot}
		fb, class := st.fallbackOf(klog.FromContext(ctx), m.pod, k, class, hasOwn)
		ok, err := c.decide(ctx, key, p, m, slot, class, hasOwn, fb)
		if err != nil {
			return err
		}
		if ok {
			st.decided(m.pod.UID, k, class)
		}
		taken[slot] = taken[slot] || ok
	}
	return nil
}

// fixedSlot is the slot a StatefulSet pod (ordinal+1) or an Indexed Job pod
// (completion index+1) always takes; 0 for the others, which take the
// lowest free slot.
func fixedSlot(kind string, pod *v1.Pod) int32 {
	var index string
	switch kind {
	case string(config.WorkloadStatefulSet):
		index = pod.Labels[appsv1.PodIndexLabel]
		if index == "" {
			index = pod.Name[strings.LastIndex(pod.Name, "-")+1:]
		}
	case string(config.WorkloadJob):
		index = pod.Labels[batchv1.JobCompletionIndexAnnotation]
		if index == "" {
			index = pod.Annotations[batchv1.JobCompletionIndexAnnotation]
		}
	default:
		return 0
	}
	i, err := strconv.ParseInt(index, 10, 32)
	if err != nil || i < 0 || i >= 1<<31-1 {
		return 0
	}
	return int32(i) + 1
}
