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

// Package quota is what the NodePoolQuota plugin and its controller share:
// a NodePoolQuota compiled for lookups (which nodes are in the pool, which
// team a namespace belongs to, the limits), a pod's counted requests, and
// the message that says which limit a pod would break.
package quota

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// Quota is one NodePoolQuota, compiled.
type Quota struct {
	// Name is the NodePoolQuota's name: the pool's name in messages.
	Name  string
	Nodes labels.Selector
	Teams []Team
}

// Team is one team of a quota.
type Team struct {
	Name       string
	Namespaces sets.Set[string]
	// Selector selects the team's namespaces by label; nil selects none.
	Selector labels.Selector
	// Limits are in Amount units, one per limited resource.
	Limits []Limit
}

// Limit is the most a team may request of one resource in the pool.
type Limit struct {
	Resource corev1.ResourceName
	Max      int64 // in Amount units
}

// Compile checks and compiles q. The API server's schema has checked the
// shape; Compile refuses what it cannot use (an invalid selector), naming
// the field.
func Compile(q *v1alpha1.NodePoolQuota) (*Quota, error) {
	nodes, err := metav1.LabelSelectorAsSelector(&q.Spec.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("NodePoolQuota %s: spec.nodeSelector: %w", q.Name, err)
	}
	c := &Quota{Name: q.Name, Nodes: nodes, Teams: make([]Team, 0, len(q.Spec.Teams))}
	for i, t := range q.Spec.Teams {
		team := Team{Name: t.Name, Namespaces: sets.New(t.Namespaces...)}
		if t.NamespaceSelector != nil {
			if team.Selector, err = metav1.LabelSelectorAsSelector(t.NamespaceSelector); err != nil {
				return nil, fmt.Errorf("NodePoolQuota %s: spec.teams[%d].namespaceSelector: %w", q.Name, i, err)
			}
		}
		for name, max := range t.Limits {
			team.Limits = append(team.Limits, Limit{Resource: name, Max: Amount(name, &max)})
		}
		sort.Slice(team.Limits, func(a, b int) bool { return team.Limits[a].Resource < team.Limits[b].Resource })
		c.Teams = append(c.Teams, team)
	}
	return c, nil
}

// Amount is a quantity in the unit the quota counts name in: millicores
// for cpu, whole units (bytes, devices, pods) for everything else, so that
// sums are exact integers.
func Amount(name corev1.ResourceName, q *resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Format writes an amount of name as people read it.
func Format(name corev1.ResourceName, amount int64) string {
	if name == corev1.ResourceCPU {
		if amount%1000 == 0 {
			return fmt.Sprint(amount / 1000)
		}
		return fmt.Sprintf("%dm", amount)
	}
	return fmt.Sprint(amount)
}

// TeamOf is the index of the first team of q that ns belongs to, or -1.
// nsLabels are the namespace's labels (nil when the namespace is unknown:
// only the teams that name it then match).
func (q *Quota) TeamOf(ns string, nsLabels labels.Set) int {
	for i := range q.Teams {
		t := &q.Teams[i]
		if t.Namespaces.Has(ns) || (t.Selector != nil && nsLabels != nil && t.Selector.Matches(nsLabels)) {
			return i
		}
	}
	return -1
}

// InPool says whether a node with these labels is in the pool.
func (q *Quota) InPool(nodeLabels map[string]string) bool {
	return q.Nodes.Matches(labels.Set(nodeLabels))
}

// Requests are what pod counts against team's limits, in the order of
// team.Limits: its requests as the scheduler's resource fit computes them
// from the spec (init containers, sidecars, overhead, pod-level
// resources), and 1 for "pods".
func Requests(pod *corev1.Pod, team *Team) []int64 {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	out := make([]int64, len(team.Limits))
	for i, l := range team.Limits {
		if l.Resource == corev1.ResourcePods {
			out[i] = 1
			continue
		}
		if q, ok := reqs[l.Resource]; ok {
			out[i] = Amount(l.Resource, &q)
		}
	}
	return out
}

// Counts is true when pod asks for any resource team limits: a pod that
// asks for none (no "pods" limit, no cpu request under a cpu limit) never
// counts and is never held.
func Counts(req []int64) bool {
	for _, r := range req {
		if r > 0 {
			return true
		}
	}
	return false
}

// Exceeded is the first limit of team that used plus req would pass, as
// its index, or -1. used and req are in the order of team.Limits.
func Exceeded(team *Team, used, req []int64) int {
	for i, l := range team.Limits {
		if req[i] > 0 && used[i]+req[i] > l.Max {
			return i
		}
	}
	return -1
}

// Message says which limit a pod would break, e.g. "team-a uses 64 of 64
// nvidia.com/gpu in pool h100 and the pod asks for 1".
func Message(pool string, team *Team, i int, used, req []int64) string {
	l := team.Limits[i]
	return fmt.Sprintf("team %s uses %s of %s %s in pool %s and the pod asks for %s",
		team.Name, Format(l.Resource, used[i]), Format(l.Resource, l.Max), l.Resource, pool, Format(l.Resource, req[i]))
}
