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
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// Condition types of a NodePoolQuota's status, and their reasons.
const (
	ConditionValid         = "Valid"
	ConditionNodesSelected = "NodesSelected"
	ConditionAtLimit       = "AtLimit"
	// ConditionResourcesOffered is False while a limited resource is
	// offered by no node of a non-empty pool.
	ConditionResourcesOffered = "ResourcesOffered"
	// ConditionOverlapping is True while a team of this quota is limited
	// by another quota on nodes both select.
	ConditionOverlapping = "Overlapping"

	ReasonValid         = "Valid"
	ReasonInvalid       = "Invalid"
	ReasonNodesSelected = "NodesSelected"
	ReasonNoNodes       = "NoNodes"
	ReasonTeamsHeld     = "TeamsHeld"
	ReasonWithinLimits  = "WithinLimits"
	ReasonOffered       = "Offered"
	ReasonNotOffered    = "NotOffered"
	ReasonSharedNodes   = "SharedNodesAndNamespaces"
	ReasonNoOverlap     = "NoOverlap"
)

// NoNodesMessage is NodesSelected's message while the pool is empty.
const NoNodesMessage = "spec.nodeSelector matches no node; pods held for this pool wait until one joins"

// status is the pool's status as this sync found it, its conditions
// merged into old's so that a condition's lastTransitionTime moves only
// when its status does.
func (pl *pool) status(old *v1alpha1.NodePoolQuotaStatus, now metav1.Time) *v1alpha1.NodePoolQuotaStatus {
	gen := pl.obj.Generation
	st := &v1alpha1.NodePoolQuotaStatus{
		ObservedGeneration: gen,
		TeamCount:          int32(len(pl.obj.Spec.Teams)),
		Conditions:         append([]metav1.Condition(nil), old.Conditions...),
	}
	set := func(typ string, status metav1.ConditionStatus, reason, message string) {
		c := metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: gen, LastTransitionTime: now}
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if pl.q == nil {
		set(ConditionValid, metav1.ConditionFalse, ReasonInvalid, pl.invalid+"; no pod is held for this quota until it is fixed")
		meta.RemoveStatusCondition(&st.Conditions, ConditionNodesSelected)
		meta.RemoveStatusCondition(&st.Conditions, ConditionAtLimit)
		meta.RemoveStatusCondition(&st.Conditions, ConditionResourcesOffered)
		meta.RemoveStatusCondition(&st.Conditions, ConditionOverlapping)
		return st
	}
	set(ConditionValid, metav1.ConditionTrue, ReasonValid, "the quota is in force")
	st.Nodes = int32(len(pl.inPool))
	if st.Nodes == 0 {
		set(ConditionNodesSelected, metav1.ConditionFalse, ReasonNoNodes, NoNodesMessage)
	} else {
		set(ConditionNodesSelected, metav1.ConditionTrue, ReasonNodesSelected, fmt.Sprintf("spec.nodeSelector matches %d nodes", st.Nodes))
	}
	if len(pl.missing) > 0 {
		names := make([]string, len(pl.missing))
		for i, r := range pl.missing {
			names[i] = string(r)
		}
		set(ConditionResourcesOffered, metav1.ConditionFalse, ReasonNotOffered, fmt.Sprintf(
			"no node of the pool has allocatable %s: its limits hold back only pods that ask for it, and no such pod fits the pool; check the resource name",
			strings.Join(names, ", ")))
	} else {
		set(ConditionResourcesOffered, metav1.ConditionTrue, ReasonOffered, "every limited resource is offered by a node of the pool, or the pool is empty")
	}
	if len(pl.overlaps) > 0 {
		set(ConditionOverlapping, metav1.ConditionTrue, ReasonSharedNodes, strings.Join(pl.overlaps, "; "))
	} else {
		set(ConditionOverlapping, metav1.ConditionFalse, ReasonNoOverlap, "no team of this quota is limited by another quota on the same nodes")
	}
	var held []string
	for t := range pl.q.Teams {
		team := &pl.q.Teams[t]
		u := v1alpha1.TeamUsage{Name: team.Name, Held: pl.held[t], Used: v1.ResourceList{}}
		for i, l := range team.Limits {
			u.Used[l.Resource] = quantity(l.Resource, pl.used[t][i])
			if pl.used[t][i] > l.Max {
				u.OverLimit = append(u.OverLimit, l.Resource)
			}
		}
		st.HeldPods += pl.held[t]
		st.Teams = append(st.Teams, u)
		if pl.held[t] > 0 {
			held = append(held, fmt.Sprintf("team %s has %d pods held (%s)", team.Name, pl.held[t], pl.why[t]))
		}
	}
	if len(held) > 0 {
		set(ConditionAtLimit, metav1.ConditionTrue, ReasonTeamsHeld, strings.Join(held, "; "))
	} else {
		set(ConditionAtLimit, metav1.ConditionFalse, ReasonWithinLimits, "no pod is held")
	}
	return st
}

// quantity is amount (quota.Amount's units) of name as a Quantity.
func quantity(name v1.ResourceName, amount int64) resource.Quantity {
	switch {
	case name == v1.ResourceCPU:
		return *resource.NewMilliQuantity(amount, resource.DecimalSI)
	case name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix):
		return *resource.NewQuantity(amount, resource.BinarySI)
	}
	return *resource.NewQuantity(amount, resource.DecimalSI)
}

// metricValue is amount in the resource's base unit (cores for cpu).
func metricValue(name v1.ResourceName, amount int64) float64 {
	if name == v1.ResourceCPU {
		return float64(amount) / 1000
	}
	return float64(amount)
}
