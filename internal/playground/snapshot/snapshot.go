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

// Package snapshot reads a live cluster into a scenario: its nodes and the
// pods bound to them, reduced to what the plugins read, for the playground
// to replay (scenario.Write writes it).
package snapshot

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	configv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// A snapshot is a scenario made from a live cluster: its nodes and the pods
// bound to them, reduced to what our plugins and the default ones read.
// Nothing else leaves the cluster: no images, env, volumes, secrets or
// annotations, except NodeAnnotations of nodes.

// NodeAnnotations are the only node annotations a snapshot keeps:
// the ones our plugins read (MaintenanceWindow, with its default key).
var NodeAnnotations = []string{configv1.DefaultMaintenanceWindowAnnotation}

// Options tune Take.
type Options struct {
	// Namespace restricts the pods to one namespace; empty is every
	// namespace. Nodes are always all recorded.
	Namespace string
	// PageSize is the limit of each list request; 0 is 500.
	PageSize int64
	// Progress receives a line per 1,000 pods and per 1,000 nodes listed;
	// nil discards them.
	Progress io.Writer
	// Pending records the pending pods too, as Pod objects for the replay
	// to place (see PendingPodFrom), at most scenario.MaxPods of them.
	Pending bool
	// SchedulerNames, when not empty, restricts the pending pods to those
	// that name one of these schedulers.
	SchedulerNames []string
}

// Take lists the cluster's nodes and its pods bound to them (pending,
// running or of unknown phase: Succeeded and Failed ones hold no
// resources), page by page, and returns them as a scenario with nodes and
// boundPods; with opts.Pending, its pending pods as objects. A pod whose
// node is not listed (deleted meanwhile) is left out.
func Take(ctx context.Context, client kubernetes.Interface, opts Options) (*scenario.Scenario, error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 500
	}
	s := &scenario.Scenario{}
	nodes, err := takeNodes(ctx, client, opts, s)
	if err != nil {
		return nil, err
	}
	if err := takeBoundPods(ctx, client, opts, s, nodes); err != nil {
		return nil, err
	}
	if opts.Pending {
		if err := takePendingPods(ctx, client, opts, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func takeNodes(ctx context.Context, client kubernetes.Interface, opts Options, s *scenario.Scenario) (map[string]bool, error) {
	nodes := map[string]bool{}
	next := 1000
	cont := ""
	for {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: opts.PageSize, Continue: cont})
		if err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		for i := range list.Items {
			n := &list.Items[i]
			s.Nodes = append(s.Nodes, NodeSpecFrom(n))
			nodes[n.Name] = true
		}
		if len(s.Nodes) >= next {
			fmt.Fprintf(opts.Progress, "listed %d nodes\n", len(s.Nodes))
			next = (len(s.Nodes)/1000 + 1) * 1000
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	fmt.Fprintf(opts.Progress, "%d nodes\n", len(s.Nodes))
	return nodes, nil
}

func takeBoundPods(ctx context.Context, client kubernetes.Interface, opts Options, s *scenario.Scenario, nodes map[string]bool) error {
	logger := klog.FromContext(ctx)
	skipped := 0
	// Bound, and holding resources; checked again below.
	err := eachPod(ctx, client, opts, "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed", func(p *corev1.Pod) {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return
		}
		if !nodes[p.Spec.NodeName] {
			skipped++
			logger.V(2).Info("Skipping a pod whose node is not in the snapshot", "pod", klog.KObj(p), "node", p.Spec.NodeName)
			return
		}
		s.BoundPods = append(s.BoundPods, BoundPodFrom(p))
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Progress, "%d bound pods", len(s.BoundPods))
	if skipped > 0 {
		fmt.Fprintf(opts.Progress, " (%d skipped: their node was not listed)", skipped)
	}
	fmt.Fprintln(opts.Progress)
	return nil
}

// eachPod calls fn on every pod of opts.Namespace that fieldSelector
// selects, page by page, with a progress line per 1,000 pods.
func eachPod(ctx context.Context, client kubernetes.Interface, opts Options, fieldSelector string, fn func(*corev1.Pod)) error {
	next, seen := 1000, 0
	cont := ""
	for {
		list, err := client.CoreV1().Pods(opts.Namespace).List(ctx, metav1.ListOptions{
			Limit: opts.PageSize, Continue: cont, FieldSelector: fieldSelector,
		})
		if err != nil {
			return fmt.Errorf("listing pods: %w", err)
		}
		for i := range list.Items {
			seen++
			fn(&list.Items[i])
		}
		if seen >= next {
			fmt.Fprintf(opts.Progress, "listed %d pods\n", seen)
			next = (seen/1000 + 1) * 1000
		}
		if cont = list.Continue; cont == "" {
			return nil
		}
	}
}

// NodeSpecFrom is what a snapshot keeps of a node: name, labels, taints,
// allocatable cpu, memory and pods (capacity when allocatable lacks one),
// unschedulable and NodeAnnotations.
func NodeSpecFrom(n *corev1.Node) scenario.NodeSpec {
	spec := scenario.NodeSpec{
		Name:          n.Name,
		Labels:        cloneOrNil(n.Labels),
		Unschedulable: n.Spec.Unschedulable,
		Allocatable: scenario.Allocatable{
			CPU:    nodeResource(n, corev1.ResourceCPU),
			Memory: nodeResource(n, corev1.ResourceMemory),
			Pods:   nodeResource(n, corev1.ResourcePods),
		},
	}
	for _, key := range NodeAnnotations {
		if v, ok := n.Annotations[key]; ok {
			if spec.Annotations == nil {
				spec.Annotations = map[string]string{}
			}
			// As the cluster holds it, not as a placeholder.
			spec.Annotations[key] = scenario.EscapePlaceholders(v)
		}
	}
	for _, t := range n.Spec.Taints {
		spec.Taints = append(spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return spec
}

func nodeResource(n *corev1.Node, name corev1.ResourceName) scenario.Quantity {
	if q, ok := n.Status.Allocatable[name]; ok {
		return scenario.Quantity(q.String())
	}
	if q, ok := n.Status.Capacity[name]; ok {
		return scenario.Quantity(q.String())
	}
	return "0"
}

// BoundPodFrom is what a snapshot keeps of a pod: namespace, name, node,
// labels, controller owner (API version, kind, name), priority and each
// container's requests.
func BoundPodFrom(p *corev1.Pod) scenario.BoundPod {
	bp := scenario.BoundPod{
		Namespace: p.Namespace,
		Name:      p.Name,
		NodeName:  p.Spec.NodeName,
		Labels:    cloneOrNil(p.Labels),
		Priority:  p.Spec.Priority,
	}
	if bp.Priority != nil {
		prio := *bp.Priority
		bp.Priority = &prio
	}
	if o := metav1.GetControllerOfNoCopy(p); o != nil {
		bp.Owner = &scenario.Owner{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name}
	}
	for _, c := range p.Spec.InitContainers {
		cr := scenario.ContainerRequests{Requests: requests(c.Resources.Requests)}
		cr.Sidecar = c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		bp.InitContainers = append(bp.InitContainers, cr)
	}
	for _, c := range p.Spec.Containers {
		bp.Containers = append(bp.Containers, scenario.ContainerRequests{Requests: requests(c.Resources.Requests)})
	}
	return bp
}

func requests(rl corev1.ResourceList) map[corev1.ResourceName]scenario.Quantity {
	if len(rl) == 0 {
		return nil
	}
	out := make(map[corev1.ResourceName]scenario.Quantity, len(rl))
	for name, q := range rl {
		out[name] = scenario.Quantity(q.String())
	}
	return out
}

func cloneOrNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
