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
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota/quota"
)

// Two mistakes a valid quota can still hold, found against the cluster
// rather than the spec: a limited resource no node of the pool offers
// (often a typo: nvidia.com/gpus), and a team limited by two quotas on
// nodes both pools select. Neither changes what is enforced: the status
// says so.

// standard resources every node offers; they are never reported.
var standard = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods}

// notOffered lists the limited resources that no node of the pool has
// allocatable. An empty pool reports nothing: the nodes that will join it
// (Karpenter's, say) are not known yet.
func (pl *pool) notOffered(nodes []*v1.Node) []v1.ResourceName {
	if pl.q == nil || len(pl.inPool) == 0 {
		return nil
	}
	var missing []v1.ResourceName
	for _, t := range pl.q.Teams {
		for _, l := range t.Limits {
			if slices.Contains(standard, l.Resource) || slices.Contains(missing, l.Resource) {
				continue
			}
			if !slices.ContainsFunc(nodes, func(n *v1.Node) bool {
				q, ok := n.Status.Allocatable[l.Resource]
				return ok && pl.inPool[n.Name] && !q.IsZero()
			}) {
				missing = append(missing, l.Resource)
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// overlaps sets, on every pair of valid pools that select a node in common
// and limit a team each that holds a namespace in common, one line on
// each pool saying so.
func overlaps(pools []*pool, namespaces map[string]labels.Set) {
	for i, a := range pools {
		for _, b := range pools[i+1:] {
			if a.q == nil || b.q == nil {
				continue
			}
			shared := 0
			for n := range a.inPool {
				if b.inPool[n] {
					shared++
				}
			}
			if shared == 0 {
				continue
			}
			for ta := range a.q.Teams {
				for tb := range b.q.Teams {
					common := commonNamespaces(&a.q.Teams[ta], &b.q.Teams[tb], namespaces)
					if len(common) == 0 {
						continue
					}
					a.overlaps = append(a.overlaps, overlapLine(&a.q.Teams[ta], &b.q.Teams[tb], b.q.Name, common, shared))
					b.overlaps = append(b.overlaps, overlapLine(&b.q.Teams[tb], &a.q.Teams[ta], a.q.Name, common, shared))
				}
			}
		}
	}
}

func overlapLine(own, other *quota.Team, otherQuota string, common []string, shared int) string {
	return fmt.Sprintf("team %s shares namespaces %s with team %s of NodePoolQuota %s on %d nodes both select: both limits apply there",
		own.Name, strings.Join(common, ","), other.Name, otherQuota, shared)
}

// commonNamespaces are the known namespaces both teams hold, sorted.
func commonNamespaces(a, b *quota.Team, namespaces map[string]labels.Set) []string {
	var out []string
	for ns, l := range namespaces {
		if holds(a, ns, l) && holds(b, ns, l) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

func holds(t *quota.Team, ns string, l labels.Set) bool {
	return t.Namespaces.Has(ns) || (t.Selector != nil && t.Selector.Matches(l))
}
