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
	// Pods are the pods of the scenario's objects at the end, by object in
	// file order, then by name (a controller names its pods at random). A
	// pod deleted on the way is not listed; a Job's pods that succeeded are.
	Pods []PodResult `json:"pods"`
	// Spread is the max - min of Nodes[*].Pods.
	Spread int `json:"spread"`
	// Steps are the pods per node after each of the scenario's steps.
	Steps []StepResult `json:"steps,omitempty"`
}

// StepResult is the pods per node after one step of the scenario.
type StepResult struct {
	// Step is the step as the progress line shows it (scale Deployment
	// default/web to 2).
	Step  string       `json:"step"`
	Nodes []NodeResult `json:"nodes"`
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

// OwnedPod is one pod of a scenario object: Object is Kind/name.
type OwnedPod struct {
	Object string
	Pod    *corev1.Pod
}

// Compute builds a Result from the scenario's node names and the pods of
// its objects, in the order of the result. events holds the last
// FailedScheduling event message per pod, if any.
func Compute(nodes []string, pods []OwnedPod, events map[types.NamespacedName]string) Result {
	r := Result{Pods: make([]PodResult, 0, len(pods))}
	for _, op := range pods {
		pod := op.Pod
		pr := PodResult{Namespace: pod.Namespace, Name: pod.Name, Object: op.Object}
		if Bound(pod) {
			pr.Node = pod.Spec.NodeName
		} else {
			pr.Reason = unscheduledReason(pod, events[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}])
		}
		r.Pods = append(r.Pods, pr)
	}
	r.Nodes, r.Spread = perNode(nodes, pods)
	return r
}

// perNode counts the bound pods of each node, in the order of nodes.
func perNode(nodes []string, pods []OwnedPod) ([]NodeResult, int) {
	counts := make(map[string]int, len(nodes))
	for _, op := range pods {
		if Bound(op.Pod) {
			counts[op.Pod.Spec.NodeName]++
		}
	}
	out := make([]NodeResult, 0, len(nodes))
	values := make([]int, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, NodeResult{Name: n, Pods: counts[n]})
		values = append(values, counts[n])
	}
	return out, Spread(values)
}

// ownedPods is the pods of every object of refs that o shows, in order.
func (o *observation) ownedPods(refs []Ref) []OwnedPod {
	var pods []OwnedPod
	for _, r := range refs {
		for _, p := range o.state(r).Pods {
			pods = append(pods, OwnedPod{Object: r.object(), Pod: p})
		}
	}
	return pods
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

// Collect reads the pods of the objects of refs and the FailedScheduling
// events of those not bound, and computes the Result.
func Collect(ctx context.Context, client kubernetes.Interface, nodes []string, refs []Ref) (Result, error) {
	o, err := observe(ctx, client, refs, nil)
	if err != nil {
		return Result{}, err
	}
	pods := o.ownedPods(refs)
	events := map[types.NamespacedName]string{}
	for _, op := range pods {
		p := op.Pod
		if Bound(p) {
			continue
		}
		list, err := client.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": p.Name, "reason": "FailedScheduling"}.String(),
		})
		if err != nil {
			return Result{}, fmt.Errorf("listing the events of pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		if msg := lastMessage(list.Items); msg != "" {
			events[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = msg
		}
	}
	return Compute(nodes, pods, events), nil
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
