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
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// ownClass is the class pod already confines itself to through its own
// required node affinity and nodeSelector: every term it can be scheduled by
// implies the class's requirements. Such a pod is decided to that class and
// counted, never overridden. false when the pod requires neither class, or
// (unschedulably) both.
func ownClass(p *policy.Policy, pod *v1.Pod) (share.Class, bool) {
	terms := requiredTerms(pod)
	if len(terms) == 0 {
		return "", false
	}
	var found share.Class
	n := 0
	for _, c := range []share.Class{share.OnDemand, share.Spot} {
		reqs, _ := p.Requirements(c)
		if !slices.ContainsFunc(terms, func(t []v1.NodeSelectorRequirement) bool { return !impliesAll(t, reqs) }) {
			found, n = c, n+1
		}
	}
	return found, n == 1
}

// requiredTerms are the node label requirements of each required term that
// can match a node, each ANDed with the nodeSelector.
func requiredTerms(pod *v1.Pod) [][]v1.NodeSelectorRequirement {
	var sel []v1.NodeSelectorRequirement
	for k, v := range pod.Spec.NodeSelector {
		sel = append(sel, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{v}})
	}
	var terms [][]v1.NodeSelectorRequirement
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
				continue // matches no node
			}
			terms = append(terms, append(slices.Clone(t.MatchExpressions), sel...))
		}
		if len(terms) > 0 {
			return terms
		}
	}
	if len(sel) > 0 {
		terms = append(terms, sel)
	}
	return terms
}

// impliesAll reports whether every node that meets term meets all of reqs.
func impliesAll(term, reqs []v1.NodeSelectorRequirement) bool {
	for i := range reqs {
		if !slices.ContainsFunc(term, func(t v1.NodeSelectorRequirement) bool { return implies(&t, &reqs[i]) }) {
			return false
		}
	}
	return true
}

// implies reports whether a node meeting t always meets r; it knows the
// operators the presets use and otherwise asks for equality.
func implies(t, r *v1.NodeSelectorRequirement) bool {
	if t.Key != r.Key {
		return false
	}
	in := t.Operator == v1.NodeSelectorOpIn && len(t.Values) > 0
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		return in && subset(t.Values, r.Values)
	case v1.NodeSelectorOpNotIn:
		return (in && !slices.ContainsFunc(t.Values, func(v string) bool { return slices.Contains(r.Values, v) })) ||
			(t.Operator == v1.NodeSelectorOpNotIn && subset(r.Values, t.Values)) ||
			t.Operator == v1.NodeSelectorOpDoesNotExist
	case v1.NodeSelectorOpExists:
		return in || t.Operator == v1.NodeSelectorOpExists
	case v1.NodeSelectorOpDoesNotExist:
		return t.Operator == v1.NodeSelectorOpDoesNotExist
	}
	return equality.Semantic.DeepEqual(*t, *r)
}

func subset(a, b []string) bool {
	return !slices.ContainsFunc(a, func(v string) bool { return !slices.Contains(b, v) })
}
