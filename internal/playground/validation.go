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
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Workload is one decoded scenario object: exactly one field is set.
type Workload struct {
	Pod        *corev1.Pod
	ReplicaSet *appsv1.ReplicaSet
	Deployment *appsv1.Deployment
	// StatefulSet, Job and DaemonSet pods are made by their controllers
	// too.
	StatefulSet *appsv1.StatefulSet
	Job         *batchv1.Job
	DaemonSet   *appsv1.DaemonSet
	// Service has no pods; the scheduler reads it: PodTopologySpread's
	// system default constraints apply to the pods it selects.
	Service *corev1.Service
}

// meta returns the kind and metadata of the object w holds.
func (w Workload) meta() (string, metav1.Object) {
	switch {
	case w.Pod != nil:
		return "Pod", w.Pod
	case w.ReplicaSet != nil:
		return "ReplicaSet", w.ReplicaSet
	case w.Deployment != nil:
		return "Deployment", w.Deployment
	case w.StatefulSet != nil:
		return "StatefulSet", w.StatefulSet
	case w.Job != nil:
		return "Job", w.Job
	case w.DaemonSet != nil:
		return "DaemonSet", w.DaemonSet
	default:
		return "Service", w.Service
	}
}

var supportedKinds = []string{"Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", "DaemonSet", "Service"}

// apiVersions is the API version of each supported kind.
var apiVersions = map[string]string{
	"Pod": "v1", "ReplicaSet": "apps/v1", "Deployment": "apps/v1", "StatefulSet": "apps/v1",
	"Job": "batch/v1", "DaemonSet": "apps/v1", "Service": "v1",
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

// Validate returns every problem of s with its field path. schedulerNames,
// when not empty, are the only scheduler names pods may ask for. It checks
// the sizes (MaxNodes, MaxPods) before it expands anything, so an
// oversized scenario is rejected without allocating for its size.
func Validate(s *Scenario, schedulerNames []string) field.ErrorList {
	errs := validateNodes(s.Nodes)
	errs = append(errs, validateBoundPods(s.BoundPods, nodeSet(s.Nodes))...)
	ws, objErrs := decodeObjects(s, schedulerNames)
	errs = append(errs, objErrs...)
	objects := sets.New[string]()
	for _, w := range ws {
		kind, meta := w.meta()
		objects.Insert(objectKey(kind, meta.GetNamespace(), meta.GetName()))
	}
	if len(objErrs) > 0 {
		objects = nil // an object that did not decode may be the one named
	}
	return append(errs, validateSteps(s.Steps, objects)...)
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

// Workloads decodes the scenario's objects into typed objects, with
// namespaces and defaults applied. It fails on an invalid scenario.
func (s *Scenario) Workloads(schedulerNames []string) ([]Workload, error) {
	ws, errs := decodeObjects(s, schedulerNames)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return ws, nil
}

// decodeObjects turns each object into a typed one, strictly, and checks
// what the playground relies on.
func decodeObjects(s *Scenario, schedulerNames []string) ([]Workload, field.ErrorList) {
	var errs field.ErrorList
	var out []Workload
	// nodes is nil when the node specs are too large to expand (reported by
	// validateNodes): spec.nodeName is not checked then.
	var nodes sets.Set[string]
	if _, expandable := countNodes(s.Nodes); expandable {
		nodes = sets.New[string]()
		for _, n := range s.Nodes {
			nodes.Insert(nodeNames(n)...)
		}
	}
	pods := 0 // pods the objects make, for MaxPods
	for i, obj := range s.Objects {
		p := field.NewPath("objects").Index(i)
		kind, _ := obj["kind"].(string)
		if kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), "one of "+strings.Join(supportedKinds, ", ")))
			continue
		}
		want, ok := apiVersions[kind]
		if !ok {
			errs = append(errs, field.NotSupported(p.Child("kind"), kind, supportedKinds))
			continue
		}
		if v, _ := obj["apiVersion"].(string); v != "" && v != want {
			errs = append(errs, field.NotSupported(p.Child("apiVersion"), v, []string{want}))
			continue
		}
		data, err := json.Marshal(obj)
		if err != nil {
			errs = append(errs, field.Invalid(p, kind, err.Error()))
			continue
		}
		var w Workload
		var meta *metav1.ObjectMeta
		switch kind {
		case "Pod":
			w.Pod = &corev1.Pod{}
			err = unmarshalStrict(data, w.Pod)
			meta = &w.Pod.ObjectMeta
		case "ReplicaSet":
			w.ReplicaSet = &appsv1.ReplicaSet{}
			err = unmarshalStrict(data, w.ReplicaSet)
			meta = &w.ReplicaSet.ObjectMeta
		case "Deployment":
			w.Deployment = &appsv1.Deployment{}
			err = unmarshalStrict(data, w.Deployment)
			meta = &w.Deployment.ObjectMeta
		case "StatefulSet":
			w.StatefulSet = &appsv1.StatefulSet{}
			err = unmarshalStrict(data, w.StatefulSet)
			meta = &w.StatefulSet.ObjectMeta
		case "Job":
			w.Job = &batchv1.Job{}
			err = unmarshalStrict(data, w.Job)
			meta = &w.Job.ObjectMeta
		case "DaemonSet":
			w.DaemonSet = &appsv1.DaemonSet{}
			err = unmarshalStrict(data, w.DaemonSet)
			meta = &w.DaemonSet.ObjectMeta
		case "Service":
			w.Service = &corev1.Service{}
			err = unmarshalStrict(data, w.Service)
			meta = &w.Service.ObjectMeta
		}
		if err != nil {
			errs = append(errs, field.Invalid(p, kind, err.Error()))
			continue
		}
		errs = append(errs, validateMeta(meta, p.Child("metadata"))...)
		switch {
		case w.Pod != nil:
			w.Pod.APIVersion, w.Pod.Kind = want, kind
			pods++
			errs = append(errs, validatePodSpec(&w.Pod.Spec, p.Child("spec"), nodes, schedulerNames)...)
		case w.ReplicaSet != nil:
			w.ReplicaSet.APIVersion, w.ReplicaSet.Kind = want, kind
			pods += replicasInRange(w.ReplicaSet.Spec.Replicas)
			errs = append(errs, validateReplicas(w.ReplicaSet.Spec.Replicas, p.Child("spec", "replicas"))...)
			errs = append(errs, validatePodSpec(&w.ReplicaSet.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			defaultSelector(w.ReplicaSet.Name, &w.ReplicaSet.Spec.Selector, &w.ReplicaSet.Spec.Template)
		case w.Deployment != nil:
			w.Deployment.APIVersion, w.Deployment.Kind = want, kind
			pods += replicasInRange(w.Deployment.Spec.Replicas)
			errs = append(errs, validateReplicas(w.Deployment.Spec.Replicas, p.Child("spec", "replicas"))...)
			errs = append(errs, validatePodSpec(&w.Deployment.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			defaultSelector(w.Deployment.Name, &w.Deployment.Spec.Selector, &w.Deployment.Spec.Template)
		case w.StatefulSet != nil:
			w.StatefulSet.APIVersion, w.StatefulSet.Kind = want, kind
			pods += replicasInRange(w.StatefulSet.Spec.Replicas)
			errs = append(errs, validateReplicas(w.StatefulSet.Spec.Replicas, p.Child("spec", "replicas"))...)
			errs = append(errs, validatePodSpec(&w.StatefulSet.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			defaultSelector(w.StatefulSet.Name, &w.StatefulSet.Spec.Selector, &w.StatefulSet.Spec.Template)
		case w.Job != nil:
			w.Job.APIVersion, w.Job.Kind = want, kind
			// The Job controller runs at most max(completions, parallelism)
			// pods that succeed; failed ones are retried up to the backoff
			// limit, which MaxPods does not count.
			pods += max(replicasInRange(w.Job.Spec.Completions), replicasInRange(w.Job.Spec.Parallelism))
			errs = append(errs, validateReplicas(w.Job.Spec.Completions, p.Child("spec", "completions"))...)
			errs = append(errs, validateReplicas(w.Job.Spec.Parallelism, p.Child("spec", "parallelism"))...)
			errs = append(errs, validatePodSpec(&w.Job.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			// The API server refuses a Job whose pods restart Always, its
			// default: a Job that names none gets Never.
			switch w.Job.Spec.Template.Spec.RestartPolicy {
			case "":
				w.Job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			case corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
			default:
				errs = append(errs, field.NotSupported(p.Child("spec", "template", "spec", "restartPolicy"), w.Job.Spec.Template.Spec.RestartPolicy,
					[]string{string(corev1.RestartPolicyNever), string(corev1.RestartPolicyOnFailure)}))
			}
		case w.DaemonSet != nil:
			w.DaemonSet.APIVersion, w.DaemonSet.Kind = want, kind
			if nodes != nil {
				pods += nodes.Len()
			}
			errs = append(errs, validatePodSpec(&w.DaemonSet.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			defaultSelector(w.DaemonSet.Name, &w.DaemonSet.Spec.Selector, &w.DaemonSet.Spec.Template)
		case w.Service != nil:
			w.Service.APIVersion, w.Service.Kind = want, kind
			errs = append(errs, validateServiceSpec(&w.Service.Spec, p.Child("spec"))...)
		}
		out = append(out, w)
	}
	if pods > MaxPods {
		errs = append(errs, field.Invalid(field.NewPath("objects"), pods,
			fmt.Sprintf("pods in total (one per Pod, spec.replicas per ReplicaSet, Deployment and StatefulSet, completions or parallelism per Job, the node count per DaemonSet): must be at most %d", MaxPods)))
	}
	return out, errs
}

// validateMeta defaults the namespace and checks the name.
func validateMeta(m *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Namespace == "" {
		m.Namespace = DefaultNamespace
	}
	if m.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "generateName is not supported"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(m.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), m.Name, msg))
		}
	}
	for _, msg := range validation.IsDNS1123Label(m.Namespace) {
		errs = append(errs, field.Invalid(path.Child("namespace"), m.Namespace, msg))
	}
	return errs
}

func validateReplicas(replicas *int32, path *field.Path) field.ErrorList {
	if replicas != nil && (*replicas < 0 || *replicas > MaxPods) {
		return field.ErrorList{field.Invalid(path, *replicas, fmt.Sprintf("must be at least 0 and at most %d", MaxPods))}
	}
	return nil
}

// replicasInRange is the number of pods spec.replicas makes (1 when unset),
// or 0 when out of range: that is reported on the field itself.
func replicasInRange(replicas *int32) int {
	r := int(ptr.Deref(replicas, 1))
	if r < 0 || r > MaxPods {
		return 0
	}
	return r
}

// validateServiceSpec checks what the API server would refuse only once the
// control plane runs: a Service that is not headless needs a port.
func validateServiceSpec(spec *corev1.ServiceSpec, path *field.Path) field.ErrorList {
	if len(spec.Ports) == 0 && spec.ClusterIP != corev1.ClusterIPNone {
		return field.ErrorList{field.Required(path.Child("ports"), "a Service that is not headless (clusterIP: None) needs at least one port")}
	}
	return nil
}

func validatePodSpec(spec *corev1.PodSpec, path *field.Path, nodes sets.Set[string], schedulerNames []string) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	if spec.NodeName != "" {
		if nodes != nil && !nodes.Has(spec.NodeName) {
			errs = append(errs, field.NotFound(path.Child("nodeName"), spec.NodeName))
		}
		return errs // bound already: no scheduler involved
	}
	if spec.SchedulerName != "" && len(schedulerNames) > 0 && !slices.Contains(schedulerNames, spec.SchedulerName) {
		errs = append(errs, field.NotSupported(path.Child("schedulerName"), spec.SchedulerName, schedulerNames))
	}
	return errs
}
