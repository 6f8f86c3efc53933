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
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// ValidationError lists every problem of a scenario file.
type ValidationError struct {
	File string
	Errs field.ErrorList
}

func (e *ValidationError) Error() string {
	lines := make([]string, 0, len(e.Errs))
	for _, err := range e.Errs {
		lines = append(lines, fmt.Sprintf("%s: %v", e.File, err))
	}
	return strings.Join(lines, "\n")
}

// Invalid wraps an error of Load or Decode as one message: one problem on
// the line of "invalid scenario:", several as an indented list under their
// count, one per line.
func Invalid(err error) error {
	return &invalidError{err: err}
}

type invalidError struct{ err error }

func (e *invalidError) Unwrap() error { return e.err }

func (e *invalidError) Error() string {
	msg := e.err.Error()
	n := strings.Count(msg, "\n") + 1
	if n == 1 {
		return "invalid scenario: " + msg
	}
	return fmt.Sprintf("invalid scenario (%d problems):\n  %s", n, strings.ReplaceAll(msg, "\n", "\n  "))
}

// Size limits of a scenario. The playground expands node counts and replicas
// in memory and creates every node and pod on one embedded API server, so a
// scenario is capped well below what would exhaust either; upstream's
// scheduler_perf runs up to 5,000 nodes and 10,000 pods the same way.
const (
	// MaxNodes caps a node spec's count and the number of nodes a scenario
	// makes in total.
	MaxNodes = 10000
	// MaxPods caps a ReplicaSet's or Deployment's spec.replicas and the
	// number of pods a scenario makes in total.
	MaxPods = 10000
	// MaxAnnotationBytes caps the node annotations a scenario makes in
	// total (keys and values, times each spec's count): the API server
	// allows 256 KiB per node, which 10,000 nodes would turn into 2.5 GiB.
	MaxAnnotationBytes = 16 << 20
)

// Validate returns every problem of s with its field path; it changes
// nothing. schedulerNames, when not empty, are the only scheduler names
// pods may ask for. It checks the sizes (MaxNodes, MaxPods) before it
// expands anything, so an oversized scenario is rejected without
// allocating for its size.
func Validate(s *Scenario, schedulerNames []string) field.ErrorList {
	_, errs := validate(s, schedulerNames)
	return errs
}

// validate is Validate that also returns the objects as it decoded them.
func validate(s *Scenario, schedulerNames []string) ([]decoded, field.ErrorList) {
	nodes := nodeSet(s.Nodes)
	errs := validateNodes(s.Nodes)
	errs = append(errs, validateBoundPods(s.BoundPods, nodes)...)
	objects, objErrs := decodeObjects(s.Objects, nodes, schedulerNames)
	errs = append(errs, objErrs...)
	refs := scenarioRefs{objects: sets.New[string](), namespaces: sets.New[string](), nodes: nodes}
	for _, o := range objects {
		refs.objects.Insert(o.key())
		refs.namespaces.Insert(o.namespaces()...)
	}
	if len(objErrs) > 0 {
		// An object that did not decode may be the one named.
		refs.objects, refs.namespaces = nil, nil
	}
	errs = append(errs, validateLicenses(s.Licenses)...)
	errs = append(errs, validateSteps(s.Steps, refs.objects, s.Licenses)...)
	return objects, append(errs, validateExpect(s.Expect, s.Config, refs)...)
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
	total := 0
	for _, n := range nodes {
		if !nodeCountInRange(n) {
			continue
		}
		size := 0
		for k, v := range n.Annotations {
			size += len(k) + len(v)
		}
		total += size * ptr.Deref(n.Count, 1)
	}
	return total
}

func validateNodes(nodes []NodeSpec) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("nodes")
	if len(nodes) == 0 {
		errs = append(errs, field.Required(path, "a scenario needs at least one node"))
	}
	total, expandable := countNodes(nodes)
	if total > MaxNodes {
		errs = append(errs, field.Invalid(path, total, fmt.Sprintf("nodes in total (the sum of every count): must be at most %d", MaxNodes)))
	}
	if bytes := annotationBytes(nodes); bytes > MaxAnnotationBytes {
		errs = append(errs, field.Invalid(path, bytes, fmt.Sprintf(
			"bytes of node annotations in total (keys and values times each count): must be at most %d", MaxAnnotationBytes)))
	}
	seen := map[string]string{} // node name -> path of the spec that made it
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
		errs = append(errs, metav1validation.ValidateLabels(n.Labels, p.Child("labels"))...)
		errs = append(errs, validateAnnotations(n.Annotations, p.Child("annotations"))...)
		errs = append(errs, validateTaints(n.Taints, p.Child("taints"))...)
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

func validateAllocatable(a Allocatable, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range []struct {
		name  string
		value Quantity
	}{{"cpu", a.CPU}, {"memory", a.Memory}, {"pods", a.Pods}} {
		if r.value == "" {
			continue
		}
		p := path.Child(r.name)
		q, err := resource.ParseQuantity(string(r.value))
		if err != nil {
			errs = append(errs, field.Invalid(p, string(r.value), err.Error()))
			continue
		}
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, string(r.value), "must not be negative"))
		}
		if msg := quantityOutOfRange(corev1.ResourceName(r.name), q); msg != "" {
			errs = append(errs, field.Invalid(p, string(r.value), msg))
			continue
		}
		if r.name == "pods" && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, string(r.value), "must be a whole number"))
		}
	}
	return errs
}

// quantityOutOfRange says why q is larger than the scheduler can count a
// resource name in, or returns "": CPU in millicores and other resources in
// units as int64, pods as an int (framework.Resource). A larger value (cpu:
// 1e100) would be clamped or wrap there and make a node nothing fits on.
func quantityOutOfRange(name corev1.ResourceName, q resource.Quantity) string {
	switch name {
	case corev1.ResourceCPU:
		if largest := resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI); q.Cmp(*largest) > 0 {
			return fmt.Sprintf("must be at most %s (the scheduler counts CPU in millicores, as an int64)", largest)
		}
	case corev1.ResourcePods:
		if largest := resource.NewQuantity(math.MaxInt, resource.DecimalSI); q.Cmp(*largest) > 0 {
			return fmt.Sprintf("must be at most %s (the scheduler counts pods as an int)", largest)
		}
	default:
		if largest := resource.NewQuantity(math.MaxInt64, resource.DecimalSI); q.Cmp(*largest) > 0 {
			return fmt.Sprintf("must be at most %s (the scheduler counts it as an int64)", largest)
		}
	}
	return ""
}
