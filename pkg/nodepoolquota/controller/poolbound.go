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
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// poolBound says whether pod can only land in the pool: every node its
// required node selection (nodeSelector and required node affinity) allows
// is in the pool. Such a pod waits gated while its team is at the limit;
// any other pod may land outside the pool, where the quota does not apply,
// and the scheduler plugin keeps it off a full pool, so its gate goes at
// once.
//
// The pod is pool-bound when its selection requires the pool selector's
// matchLabels (so a node that joins the pool later counts too), or when
// the nodes it matches today are all in the pool and there is one.
func poolBound(pod *v1.Pod, poolLabels map[string]string, nodes []*v1.Node, inPool func(*v1.Node) bool) bool {
	if requiresLabels(pod, poolLabels) {
		return true
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	matched := false
	for _, n := range nodes {
		// An affinity the API server let through but that does not parse
		// matches no node, as in the scheduler.
		if ok, err := required.Match(n); err != nil || !ok {
			continue
		}
		if !inPool(n) {
			return false
		}
		matched = true
	}
	return matched
}

// requiresLabels says whether every node pod's required node selection
// allows carries labels: each label is in its nodeSelector, or every term
// of its required node affinity has an In expression on the label's key
// with the label's value as its only value.
func requiresLabels(pod *v1.Pod, labels map[string]string) bool {
	if len(labels) == 0 {
		return false
	}
	var terms []v1.NodeSelectorTerm
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	for key, value := range labels {
		if v, ok := pod.Spec.NodeSelector[key]; ok && v == value {
			continue
		}
		if len(terms) == 0 {
			return false
		}
		for i := range terms {
			if !termRequires(&terms[i], key, value) {
				return false
			}
		}
	}
	return true
}

func termRequires(term *v1.NodeSelectorTerm, key, value string) bool {
	for _, r := range term.MatchExpressions {
		if r.Key != key || r.Operator != v1.NodeSelectorOpIn || len(r.Values) == 0 {
			continue
		}
		only := true
		for _, v := range r.Values {
			only = only && v == value
		}
		if only {
			return true
		}
	}
	return false
}
