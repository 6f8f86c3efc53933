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

package scenario

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Defaults for a node's allocatable resources.
const (
	DefaultCPU    = "8"
	DefaultMemory = "32Gi"
	DefaultPods   = "110"
)

// NodeSpec describes one node, or Count nodes named Name-1..Name-Count.
type NodeSpec struct {
	Name string `json:"name"`
	// Count defaults to 1.
	Count *int `json:"count,omitempty"`
	// Labels are given to every node of the spec, with
	// kubernetes.io/hostname set to the node's name. A value may hold the
	// placeholders of annotations, each written in Unix epoch seconds.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are given to every node of the spec. Keys are qualified
	// names, and keys and values together at most 256 KiB, as on the API
	// server. A value may hold times relative to when the nodes are created:
	// ${now}, ${now+2h}, ${now-30m}, ${now+1h30m} (a Go duration after the
	// sign) each become that time in UTC, to the second, in RFC 3339, e.g.
	//
	//	annotations:
	//	  scheduling.adminsched.io/maintenance-window: "${now+1h}/${now+3h}"
	Annotations map[string]string `json:"annotations,omitempty"`
	Taints      []corev1.Taint    `json:"taints,omitempty"`
	// Conditions go in every node's status, after the kubelet's Ready.
	Conditions  []NodeCondition `json:"conditions,omitempty"`
	Allocatable Allocatable     `json:"allocatable,omitempty"`
	// Unschedulable marks the nodes cordoned (spec.unschedulable).
	Unschedulable bool `json:"unschedulable,omitempty"`
}

// nodeSet is the names of the nodes the specs make, or nil when they are
// too many to expand (validateNodes reports that).
func nodeSet(specs []NodeSpec) sets.Set[string] {
	if _, expandable := countNodes(specs); !expandable {
		return nil
	}
	nodes := sets.New[string]()
	for _, n := range specs {
		nodes.Insert(nodeNames(n)...)
	}
	return nodes
}

// nodeCountInRange reports whether a spec's count is between 1 and MaxNodes.
func nodeCountInRange(n NodeSpec) bool {
	return n.Count == nil || (*n.Count >= 1 && *n.Count <= MaxNodes)
}

// countNodes returns how many nodes the specs make, counting only specs
// whose count is in range, and whether their names may be expanded: every
// count in range and at most MaxNodes in total. It allocates nothing.
func countNodes(nodes []NodeSpec) (total int, expandable bool) {
	expandable = true
	for _, n := range nodes {
		if !nodeCountInRange(n) {
			expandable = false
			continue
		}
		total += ptr.Deref(n.Count, 1)
	}
	return total, expandable && total <= MaxNodes
}

// annotationBytes is the size of the node annotations the specs make, as
// written (before placeholders expand), counting specs whose count is in
// range.
func annotationBytes(nodes []NodeSpec) int {
	return bytesTimesCount(nodes, func(n NodeSpec) (size int) {
		for k, v := range n.Annotations {
			size += len(k) + len(v)
		}
		return size
	})
}

func validateNodes(nodes []NodeSpec) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("nodes")
	if len(nodes) == 0 {
		errs = append(errs, field.Required(path, "a scenario needs at least one node"))
	}
	return append(errs, validateNodeSpecs(nodes, path, map[string]string{})...)
}

// validateNodeSpecs checks the specs at path; seen maps the node names
// made so far to the path of their spec, and receives those of nodes.
func validateNodeSpecs(nodes []NodeSpec, path *field.Path, seen map[string]string) field.ErrorList {
	var errs field.ErrorList
	total, expandable := countNodes(nodes)
	if total > MaxNodes {
		errs = append(errs, field.Invalid(path, total, fmt.Sprintf("nodes in total (the sum of every count): must be at most %d", MaxNodes)))
	}
	if bytes := annotationBytes(nodes); bytes > MaxAnnotationBytes {
		errs = append(errs, field.Invalid(path, bytes, fmt.Sprintf(
			"bytes of node annotations in total (keys and values times each count): must be at most %d", MaxAnnotationBytes)))
	}
	errs = append(errs, validateConditionBytes(nodes, path)...)
	for i, n := range nodes {
		p := path.Index(i)
		if n.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(n.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), n.Name, msg))
			}
		}
		if !nodeCountInRange(n) {
			errs = append(errs, field.Invalid(p.Child("count"), *n.Count, fmt.Sprintf("must be at least 1 and at most %d", MaxNodes)))
		}
		errs = append(errs, validateNodeLabels(n.Labels, p.Child("labels"))...)
		errs = append(errs, validateAnnotations(n.Annotations, p.Child("annotations"))...)
		errs = append(errs, validateTaints(n.Taints, p.Child("taints"))...)
		errs = append(errs, validateConditions(n.Conditions, p.Child("conditions"))...)
		errs = append(errs, validateAllocatable(n.Allocatable, p.Child("allocatable"))...)
		// Names are checked for duplicates only once the sizes are valid:
		// nodeNames allocates one name per node.
		if n.Name == "" || !expandable {
			continue
		}
		for _, name := range nodeNames(n) {
			if prev, ok := seen[name]; ok {
				errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (node %q, also made by %s)", n.Name, name, prev)))
				continue
			}
			seen[name] = p.String()
		}
	}
	return errs
}

// validateAnnotations checks the keys and the total size as the API server
// does, the size with the placeholders expanded (each ${now...} becomes a
// 20-byte time), and that every placeholder is well formed.
func validateAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	// Any time has the length of the time the nodes will be created at:
	// durations reach ±292 years, so years keep 4 digits.
	expanded := make(map[string]string, len(annotations))
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		v, err := expandPlaceholders(annotations[k], time.Now())
		if err != nil {
			errs = append(errs, field.Invalid(path.Key(k), annotations[k], err.Error()))
			v = annotations[k]
		}
		expanded[k] = v
	}
	return append(apivalidation.ValidateAnnotations(expanded, path), errs...)
}

var taintEffects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

func validateTaints(taints []corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range taints {
		p := path.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		if !slices.Contains(taintEffects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects))
		}
	}
	return errs
}

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

// NodeObjects returns the nodes, ready (cordoned when their spec says
// unschedulable), with their allocatable resources also as capacity. The
// placeholders of annotation values (${now}, ${now+2h}, ...) are expanded
// relative to now, the time the nodes are created; every node gets its own
// copy of its spec's labels and annotations. Nodes may be created with
// their status: create them so, lest KWOK's first status update come
// before a second one of ours.
func (p *Plan) NodeObjects(now time.Time) []*corev1.Node {
	return NodeObjects(p.Scenario.Nodes, now)
}

// NodeObjects is Plan.NodeObjects of specs: also those of an addNodes step.
func NodeObjects(specs []NodeSpec, now time.Time) []*corev1.Node {
	now = now.UTC().Truncate(time.Second)
	var nodes []*corev1.Node
	for _, spec := range specs {
		res := corev1.ResourceList{
			corev1.ResourceCPU:    quantityOr(spec.Allocatable.CPU, DefaultCPU),
			corev1.ResourceMemory: quantityOr(spec.Allocatable.Memory, DefaultMemory),
			corev1.ResourcePods:   quantityOr(spec.Allocatable.Pods, DefaultPods),
		}
		for name, q := range spec.Allocatable.Extended {
			if q != "" {
				res[name] = resource.MustParse(string(q))
			}
		}
		// Expanded once per spec: the nodes share the value strings, not
		// the maps.
		annotations := expandAnnotations(spec.Annotations, now)
		conditions := nodeConditions(spec, now)
		specLabels := expandLabels(spec.Labels, now)
		for _, name := range nodeNames(spec) {
			labels := maps.Clone(specLabels)
			if labels == nil {
				labels = map[string]string{}
			}
			labels[corev1.LabelHostname] = name
			nodes = append(nodes, &corev1.Node{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: maps.Clone(annotations)},
				Spec:       corev1.NodeSpec{Taints: append([]corev1.Taint(nil), spec.Taints...), Unschedulable: spec.Unschedulable},
				Status: corev1.NodeStatus{
					Capacity:    res.DeepCopy(),
					Allocatable: res.DeepCopy(),
					Conditions:  slices.Clone(conditions),
				},
			})
		}
	}
	return nodes
}

// NodeNames is the names of the nodes spec makes, in order: its name, or
// name-1 .. name-count.
func NodeNames(spec NodeSpec) []string { return nodeNames(spec) }
