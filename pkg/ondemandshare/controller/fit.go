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
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// nodeIndex indexes the bound pods by node name.
const nodeIndex = "ondemandshare/node"

func indexByNode(obj any) ([]string, error) {
	if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
		return []string{pod.Spec.NodeName}, nil
	}
	return nil, nil
}

// preDecision returns a copy of pod without the class requirements reqs its
// decision appended to every non-empty required term (share.RequireClass):
// the affinity it was created with, for a pod that did not require the
// class itself. A single term left empty was set by the decision, so the
// pod had no required terms.
func preDecision(pod *v1.Pod, reqs []v1.NodeSelectorRequirement) *v1.Pod {
	out := pod.DeepCopy()
	a := out.Spec.Affinity
	if len(reqs) == 0 || a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		exprs := terms[i].MatchExpressions
		if n := len(exprs) - len(reqs); n >= 0 && equality.Semantic.DeepEqual(exprs[n:], reqs) {
			terms[i].MatchExpressions = exprs[:n:n]
		}
	}
	if len(terms) == 1 && len(terms[0].MatchExpressions) == 0 && len(terms[0].MatchFields) == 0 {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
	}
	return out
}

// asSpot is a fallback pod as it would have been decided spot: its own
// affinity with the spot requirements in place of the on-demand ones, and
// the spot tolerations.
func asSpot(p *policy.Policy, pod *v1.Pod) *v1.Pod {
	onDemand, _ := p.Requirements(share.OnDemand)
	spot, tols := p.Requirements(share.Spot)
	out := preDecision(pod, onDemand)
	out.Spec.Affinity = share.RequireClass(out.Spec.Affinity, spot)
	out.Spec.Tolerations = append(out.Spec.Tolerations, tols...)
	return out
}

// ownsSpot reports whether a spot pod requires spot by itself, without the
// requirements its decision added: deleting it would bring back the same
// spot-only pod, so its wait is not timed. A pod whose own term ends with
// exactly the class requirements reads as not owning them; decideSpace
// catches that case when the replacement arrives.
func ownsSpot(p *policy.Policy, pod *v1.Pod) bool {
	reqs, _ := p.Requirements(share.Spot)
	c, ok := ownClass(p, preDecision(pod, reqs))
	return ok && c == share.Spot
}

// spotNodeFor is a node that can take the spot form of pod now: Ready and
// schedulable, of the spot class, its NoSchedule and NoExecute taints
// tolerated, the pod's required affinity matched, and room for the pod's
// requests next to those of the pods bound there and reserved, the requests
// of pods already evicted towards it in this round.
func (c *Controller) spotNodeFor(logger klog.Logger, p *policy.Policy, pod *v1.Pod, reserved map[string]v1.ResourceList) (*v1.Node, v1.ResourceList, bool) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, nil, false
	}
	slices.SortFunc(nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	spot := asSpot(p, pod)
	affinity := nodeaffinity.GetRequiredNodeAffinity(spot)
	want := requests(spot)
	for _, node := range nodes {
		if class, ok := p.NodeClass(node); !ok || class != share.Spot || node.Spec.Unschedulable || !ready(node) {
			continue
		}
		// Taint comparison operators are alpha and off by default.
		if _, bad := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, spot.Spec.Tolerations, hardTaint, false); bad {
			continue
		}
		if ok, err := affinity.Match(node); err != nil || !ok {
			continue
		}
		free := node.Status.Allocatable.DeepCopy()
		subtract(free, reserved[node.Name])
		objs, _ := c.bound.GetIndexer().ByIndex(nodeIndex, node.Name)
		for _, o := range objs {
			if other := o.(*v1.Pod); other.Spec.NodeName == node.Name && !terminal(other) {
				subtract(free, requests(other))
			}
		}
		if fitsIn(want, free) {
			return node, want, true
		}
	}
	return nil, nil, false
}

func hardTaint(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}

func ready(node *v1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// requests are pod's resource requests (containers, init containers,
// overhead, pod-level resources) plus the one pod it is.
func requests(pod *v1.Pod) v1.ResourceList {
	out := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	out[v1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return out
}

// subtract takes used from free; a resource the node lacks goes negative.
func subtract(free, used v1.ResourceList) {
	for name, q := range used {
		f := free[name]
		f.Sub(q)
		free[name] = f
	}
}

// reserve adds want to what node is already promised in this round.
func reserve(reserved map[string]v1.ResourceList, node string, want v1.ResourceList) {
	r := reserved[node]
	if r == nil {
		r = v1.ResourceList{}
		reserved[node] = r
	}
	for name, q := range want {
		t := r[name]
		t.Add(q)
		r[name] = t
	}
}

func fitsIn(want, free v1.ResourceList) bool {
	for name, q := range want {
		if f, ok := free[name]; q.Sign() > 0 && (!ok || f.Cmp(q) < 0) {
			return false
		}
	}
	return true
}
