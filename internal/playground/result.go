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

package playground

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Result is where a scenario's pods landed.
type Result struct {
	// Nodes are every node of the scenario, in file order, with the number
	// of the scenario's pods bound there.
	Nodes []NodeResult `json:"nodes"`
	// Pods are every pod the scenario created, in creation order.
	Pods []PodResult `json:"pods"`
	// Spread is the max - min of Nodes[*].Pods.
	Spread int `json:"spread"`
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
	// Node is empty when the pod is not bound.
	Node string `json:"node,omitempty"`
	// Reason says why an unbound pod has no node.
	Reason string `json:"reason,omitempty"`
	// Explain is why the scheduler chose Node, or none: only with
	// Options.Explain.
	Explain *Explanation `json:"explain,omitempty"`
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

// Compute builds a Result from the scenario's node names and its pods as
// the API server has them (nil for a pod not found). events holds the last
// FailedScheduling event message per pod, if any.
func Compute(nodes []string, refs []types.NamespacedName, pods map[types.NamespacedName]*corev1.Pod, events map[types.NamespacedName]string) Result {
	counts := make(map[string]int, len(nodes))
	r := Result{Nodes: make([]NodeResult, 0, len(nodes)), Pods: make([]PodResult, 0, len(refs))}
	for _, ref := range refs {
		pr := PodResult{Namespace: ref.Namespace, Name: ref.Name}
		pod := pods[ref]
		switch {
		case pod == nil:
			pr.Reason = "not found"
		case Bound(pod):
			pr.Node = pod.Spec.NodeName
			counts[pod.Spec.NodeName]++
		default:
			pr.Reason = unscheduledReason(pod, events[ref])
		}
		r.Pods = append(r.Pods, pr)
	}
	values := make([]int, 0, len(nodes))
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, NodeResult{Name: n, Pods: counts[n]})
		values = append(values, counts[n])
	}
	r.Spread = Spread(values)
	return r
}

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

// Collect reads the pods and their FailedScheduling events from the cluster
// and computes the Result.
func Collect(ctx context.Context, client kubernetes.Interface, nodes []string, refs []types.NamespacedName) (Result, error) {
	pods := map[types.NamespacedName]*corev1.Pod{}
	events := map[types.NamespacedName]string{}
	listed := map[string]bool{}
	for _, ref := range refs {
		if listed[ref.Namespace] {
			continue
		}
		listed[ref.Namespace] = true
		list, err := client.CoreV1().Pods(ref.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return Result{}, fmt.Errorf("listing the pods of %s: %w", ref.Namespace, err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	for _, ref := range refs {
		if p := pods[ref]; p == nil || Bound(p) {
			continue
		}
		list, err := client.CoreV1().Events(ref.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": ref.Name, "reason": "FailedScheduling"}.String(),
		})
		if err != nil {
			return Result{}, fmt.Errorf("listing the events of pod %s: %w", ref, err)
		}
		if msg := lastMessage(list.Items); msg != "" {
			events[ref] = msg
		}
	}
	return Compute(nodes, refs, pods, events), nil
}

func lastMessage(events []corev1.Event) string {
	var last *corev1.Event
	for i := range events {
		if last == nil || eventTime(&events[i]).After(eventTime(last).Time) {
			last = &events[i]
		}
	}
	if last == nil {
		return ""
	}
	return last.Message
}

func eventTime(e *corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	default:
		return e.CreationTimestamp
	}
}
