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
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

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

// NodeResult is one node's pod count and, for the HTML report, what the
// node was at that moment. The facts are not part of the text or JSON
// output.
type NodeResult struct {
	Name string `json:"name"`
	Pods int    `json:"pods"`
	// Labels are the node's labels (for grouping by zone or a label the user picks).
	Labels map[string]string `json:"-"`
	// CPU and Memory are what the scenario's bound pods request on the node and its allocatable, in millicores and bytes.
	CPU, Memory Use `json:"-"`
	// Taints are the node's taints as key=value:Effect.
	Taints []string `json:"-"`
	// Conditions are the node's lifecycle/maintenance conditions that are True (DrainInProgress, Drained, MaintenanceInProgress, MaintenancePlanned), and Ready=False.
	Conditions []string `json:"-"`
	// Maintenance is the node's maintenance-window annotation (scheduling.adminsched.io/maintenance-window) value, "" when none.
	Maintenance string `json:"-"`
}

// Use is one resource of a node: what the scenario's pods request there
// and what the node can allocate.
type Use struct {
	Requested, Allocatable int64
}

// maintenanceAnnotation and lifecycleConditions are the maintenance window
// plugin's default annotation and the node conditions it reads. Their
// constants live in apis/config and pkg/maintenancewindow/window, which
// link the scheduler: the report stays pure (a test keeps them equal).
const maintenanceAnnotation = "scheduling.adminsched.io/maintenance-window"

var lifecycleConditions = sets.New[corev1.NodeConditionType]("DrainInProgress", "Drained", "MaintenanceInProgress", "MaintenancePlanned")

// notReady is how Conditions lists a node whose Ready condition is False.
const notReady = "Ready=False"

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

// NodeOf is node's result: how many of pods are bound there, what those
// request of its allocatable, and its labels, taints, conditions and
// maintenance window. Requests are counted as the scheduler counts them
// (containers, init containers, overhead, pod-level requests); a pod that
// ended (a Job's that succeeded) counts in Pods but requests nothing, as
// the scheduler no longer counts it either.
func NodeOf(node *corev1.Node, pods []workload.OwnedPod) NodeResult {
	r := NodeResult{Name: node.Name, Labels: maps.Clone(node.Labels), Maintenance: node.Annotations[maintenanceAnnotation]}
	r.CPU.Allocatable = node.Status.Allocatable.Cpu().MilliValue()
	r.Memory.Allocatable = node.Status.Allocatable.Memory().Value()
	for _, op := range pods {
		if !workload.Bound(op.Pod) || op.Pod.Spec.NodeName != node.Name {
			continue
		}
		r.Pods++
		if op.Pod.Status.Phase == corev1.PodSucceeded || op.Pod.Status.Phase == corev1.PodFailed {
			continue
		}
		req := resourcehelper.PodRequests(op.Pod, resourcehelper.PodResourcesOptions{})
		r.CPU.Requested += req.Cpu().MilliValue()
		r.Memory.Requested += req.Memory().Value()
	}
	for i := range node.Spec.Taints {
		r.Taints = append(r.Taints, node.Spec.Taints[i].ToString())
	}
	for _, c := range node.Status.Conditions {
		switch {
		case c.Status == corev1.ConditionTrue && lifecycleConditions.Has(c.Type):
			r.Conditions = append(r.Conditions, string(c.Type))
		case c.Type == corev1.NodeReady && c.Status == corev1.ConditionFalse:
			r.Conditions = append(r.Conditions, notReady)
		}
	}
	return r
}

// FillNodes sets the facts of each of rs (see NodeOf) from its node in
// nodes, found by name, and the pods bound there. A result whose node is
// gone (a deleteNodes step) keeps its count and no facts.
func FillNodes(rs []NodeResult, nodes []corev1.Node, pods []workload.OwnedPod) {
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	bound := make(map[string][]workload.OwnedPod, len(nodes))
	for _, op := range pods {
		if workload.Bound(op.Pod) {
			bound[op.Pod.Spec.NodeName] = append(bound[op.Pod.Spec.NodeName], op)
		}
	}
	for i := range rs {
		if n, ok := byName[rs[i].Name]; ok {
			rs[i] = NodeOf(n, bound[n.Name])
		}
	}
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
