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

// Package report turns the pods of a scenario into its result (where each
// pod landed, or why it did not) and writes it: text, JSON, several runs
// side by side, and the scheduler's explanation of each placement. It is
// pure: it reads no cluster, the engine hands it the pods and events.
package report

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Result is where a scenario's pods landed.
type Result struct {
	// Nodes are every node of the scenario, in file order, with the number
	// of the scenario's pods bound there.
	Nodes []NodeResult `json:"nodes"`
	// Pods are the pods of the scenario's objects at the end, by object in
	// file order, then by name (a controller names its pods at random). A
	// pod deleted on the way is not listed; a Job's pods that succeeded are.
	Pods []PodResult `json:"pods"`
	// Spread is the max - min of Nodes[*].Pods.
	Spread int `json:"spread"`
	// Steps are the pods per node after each of the scenario's steps.
	Steps []StepResult `json:"steps,omitempty"`
	// Karpenter is what Karpenter added, in a run with it; its nodes are
	// not in Nodes (nor Spread), which hold the scenario's.
	Karpenter *KarpenterResult `json:"karpenter,omitempty"`
	// Share is each workload's on-demand share once the objects settled
	// and after each step, when the config holds OnDemandShare policies.
	Share []ShareResult `json:"onDemandShare,omitempty"`
	// Applied are the pods once the objects had settled, before the
	// steps (for assertions with afterStep: 0).
	Applied []PodResult `json:"-"`
}

// StepResult is the pods per node after one step of the scenario.
type StepResult struct {
	// Step is the step as the progress line shows it (scale Deployment
	// default/web to 2).
	Step  string       `json:"step"`
	Nodes []NodeResult `json:"nodes"`
	// Waiting is how many of the scenario's pods have no node (a Job's
	// pods waiting for a license seat, say).
	Waiting int `json:"waiting,omitempty"`
	// Evicted is how many pods the descheduler evicted in a deschedule
	// step; nil for the other steps.
	Evicted *int `json:"evicted,omitempty"`
	// Pods are the pods after the step (for assertions with afterStep).
	Pods []PodResult `json:"-"`
}

// NodeResult is one node's pod count.
type NodeResult struct {
	Name string `json:"name"`
	Pods int    `json:"pods"`
}

// PodResult is one pod's node, or why it has none.
type PodResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Object is the scenario object the pod belongs to: Kind/name.
	Object string `json:"object,omitempty"`
	// Node is empty when the pod is not bound.
	Node string `json:"node,omitempty"`
	// Reason says why an unbound pod has no node.
	Reason string `json:"reason,omitempty"`
	// Explain is why the scheduler chose Node, or none: only when the run
	// asked for explanations.
	Explain *Explanation `json:"explain,omitempty"`
	// Labels are the pod's labels, for the assertions of `playground
	// test`; not part of the output.
	Labels map[string]string `json:"-"`
}

// Spread is max - min of counts, 0 for none.
func Spread(counts []int) int {
	if len(counts) == 0 {
		return 0
	}
	lo, hi := counts[0], counts[0]
	for _, c := range counts[1:] {
		lo, hi = min(lo, c), max(hi, c)
	}
	return hi - lo
}

func scheduledCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Compute builds a Result from the scenario's node names (file order) and
// the pods of its objects, in the order of the result. events holds the
// last FailedScheduling event message per pod, if any (see
// UnschedulableMessages).
func Compute(nodes []string, pods []workload.OwnedPod, events map[types.NamespacedName]string) Result {
	r := Result{Pods: make([]PodResult, 0, len(pods))}
	for _, op := range pods {
		pod := op.Pod
		pr := PodResult{Namespace: pod.Namespace, Name: pod.Name, Object: op.Object, Labels: pod.Labels}
		if workload.Bound(pod) {
			pr.Node = pod.Spec.NodeName
		} else {
			pr.Reason = unscheduledReason(pod, events[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}])
		}
		r.Pods = append(r.Pods, pr)
	}
	r.Nodes = PerNode(nodes, pods)
	counts := make([]int, len(r.Nodes))
	for i, n := range r.Nodes {
		counts[i] = n.Pods
	}
	r.Spread = Spread(counts)
	return r
}

// PerNode counts the bound pods of each node, in the order of nodes. A pod
// bound to a node not in nodes is not counted.
func PerNode(nodes []string, pods []workload.OwnedPod) []NodeResult {
	counts := make(map[string]int, len(nodes))
	for _, op := range pods {
		if workload.Bound(op.Pod) {
			counts[op.Pod.Spec.NodeName]++
		}
	}
	out := make([]NodeResult, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, NodeResult{Name: n, Pods: counts[n]})
	}
	return out
}

// unscheduledReason is the PodScheduled condition of an unbound pod, with
// the last FailedScheduling event when it says something else.
func unscheduledReason(pod *corev1.Pod, event string) string {
	reason := "pending: the scheduler has not reported on it"
	c := scheduledCondition(pod)
	if c != nil && c.Status == corev1.ConditionFalse {
		reason = c.Reason
		if c.Message != "" {
			reason += ": " + c.Message
		}
	}
	if event != "" && (c == nil || event != c.Message) {
		reason += fmt.Sprintf(" (last FailedScheduling event: %s)", event)
	}
	return reason
}
