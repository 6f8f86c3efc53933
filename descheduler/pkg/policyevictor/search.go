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

package policyevictor

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

var labelsEverything = labels.Everything()

// stage is the check a node failed, in the order they run (cheapest
// first); a refusal names the furthest one any node got to.
type stage int

const (
	noNode stage = iota
	failedPlacement
	failedWindow
	failedFit
	passed
)

var stageReason = map[stage]string{
	noNode:          reasonNoOtherNode,
	failedPlacement: reasonPlacementPolicy,
	failedWindow:    reasonWindow,
	failedFit:       reasonNodeFit,
}

// search looks for "another node to go to": a ready node other than the
// pod's, matching nodeSelector, that passes our PlacementPolicy rules, no
// window, and (with fit) the descheduler's NodeFit, all on the same node,
// with the ledger's admitted pods counted on it. It returns the most
// preferred such node, or the reason there is none. With preferred:
// Respect, nodes all less preferred than the current one are no target:
// the scheduler would likely bring the pod back.
func (e *PolicyEvictor) search(pod *v1.Pod, rules ruleSet, fit bool) (target, reason string, err error) {
	lister := e.handle.SharedInformerFactory().Core().V1().Nodes().Lister()
	nodes, err := nodeutil.ReadyNodes(e.ctx, e.handle.ClientSet(), lister, e.args.NodeSelector)
	if err != nil {
		return "", "", err
	}
	now := e.now()
	getPods := e.ledger.withAdmitted(e.handle.GetPodsAssignedToNodeFunc(), pod.UID, now)
	var current *v1.Node
	furthest := noNode
	best, bestPref := "", int64(0)
	for _, node := range nodes {
		if node.Name == pod.Spec.NodeName {
			current = node
			continue
		}
		s := e.check(pod, rules, node, now, fit, getPods)
		furthest = max(furthest, s)
		if s != passed {
			continue
		}
		pref := preference(rules, node)
		if best == "" || pref > bestPref {
			best, bestPref = node.Name, pref
		}
	}
	if best == "" {
		return "", stageReason[furthest], nil
	}
	if e.respect && rules != nil && current != nil && bestPref < rules.Preference(current) {
		return "", reasonLessPreferred, nil
	}
	return best, "", nil
}

// check returns the first check node fails for pod, or passed.
func (e *PolicyEvictor) check(pod *v1.Pod, rules ruleSet, node *v1.Node, now time.Time, fit bool,
	getPods podutil.GetPodsAssignedToNodeFunc) stage {
	if rules != nil {
		if ok, _ := rules.Admits(node); !ok {
			return failedPlacement
		}
	}
	if e.windows != nil {
		if blocked, _ := e.windows.blocks(e.logger, pod, node, now); blocked {
			return failedWindow
		}
	}
	if fit {
		if err := nodeutil.NodeFit(e.ctx, getPods, pod, node); err != nil {
			return failedFit
		}
	}
	return passed
}

func preference(rules ruleSet, node *v1.Node) int64 {
	if rules == nil {
		return 0
	}
	return rules.Preference(node)
}
