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
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// nodeNames is the names of the nodes a spec makes: Name, or Name-1..Name-Count.
func nodeNames(n NodeSpec) []string {
	count := ptr.Deref(n.Count, 1)
	if count <= 1 {
		return []string{n.Name}
	}
	names := make([]string, 0, count)
	for i := 1; i <= count; i++ {
		names = append(names, fmt.Sprintf("%s-%d", n.Name, i))
	}
	return names
}

// NodeNames is the names of every node of s, in file order.
func (s *Scenario) NodeNames() []string {
	var names []string
	for _, n := range s.Nodes {
		names = append(names, nodeNames(n)...)
	}
	return names
}

// NodeObjects returns the nodes of s, ready, with their allocatable resources also
// as capacity. The placeholders of annotation values (${now}, ${now+2h}, ...)
// are expanded relative to now, the time the nodes are created; every node
// gets its own copy of its spec's labels and annotations. The API server
// drops status on create: set it with UpdateStatus afterwards.
func (s *Scenario) NodeObjects(now time.Time) []*corev1.Node {
	now = now.UTC().Truncate(time.Second)
	var nodes []*corev1.Node
	for _, spec := range s.Nodes {
		res := corev1.ResourceList{
			corev1.ResourceCPU:    quantityOr(spec.Allocatable.CPU, DefaultCPU),
			corev1.ResourceMemory: quantityOr(spec.Allocatable.Memory, DefaultMemory),
			corev1.ResourcePods:   quantityOr(spec.Allocatable.Pods, DefaultPods),
		}
		// Expanded once per spec: the nodes share the value strings, not
		// the maps.
		annotations := expandAnnotations(spec.Annotations, now)
		for _, name := range nodeNames(spec) {
			labels := maps.Clone(spec.Labels)
			if labels == nil {
				labels = map[string]string{}
			}
			labels[corev1.LabelHostname] = name
			nodes = append(nodes, &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: maps.Clone(annotations)},
				Spec:       corev1.NodeSpec{Taints: append([]corev1.Taint(nil), spec.Taints...)},
				Status: corev1.NodeStatus{
					Capacity:    res.DeepCopy(),
					Allocatable: res.DeepCopy(),
					Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
				},
			})
		}
	}
	return nodes
}

func quantityOr(q Quantity, def string) resource.Quantity {
	if q == "" {
		q = Quantity(def)
	}
	return resource.MustParse(string(q))
}

// defaultSelector makes a template without labels carry app=<name>, and a
// missing selector select the template's labels.
func defaultSelector(name string, selector **metav1.LabelSelector, template *corev1.PodTemplateSpec) {
	if len(template.Labels) == 0 {
		template.Labels = map[string]string{"app": name}
	}
	if *selector == nil {
		*selector = &metav1.LabelSelector{MatchLabels: maps.Clone(template.Labels)}
	}
}

// PreparePod gives pod the default namespace and, unless it names one or is
// bound already, the scheduler name.
func PreparePod(pod *corev1.Pod, schedulerName string) {
	if pod.Namespace == "" {
		pod.Namespace = DefaultNamespace
	}
	if pod.Spec.SchedulerName == "" && pod.Spec.NodeName == "" {
		pod.Spec.SchedulerName = schedulerName
	}
}

// PrepareTemplate gives a workload's pod template the
// scheduler name, unless it names one or is bound already. Call it before
// creating the object: the API server defaults an empty name to
// default-scheduler.
func PrepareTemplate(t *corev1.PodTemplateSpec, schedulerName string) {
	if t.Spec.SchedulerName == "" && t.Spec.NodeName == "" {
		t.Spec.SchedulerName = schedulerName
	}
}
