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
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
}

var supportedKinds = []string{"Pod", "ReplicaSet", "Deployment"}

// apiVersions is the API version of each supported kind.
var apiVersions = map[string]string{"Pod": "v1", "ReplicaSet": "apps/v1", "Deployment": "apps/v1"}

// Validate returns every problem of s with its field path. schedulerNames,
// when not empty, are the only scheduler names pods may ask for.
func Validate(s *Scenario, schedulerNames []string) field.ErrorList {
	errs := validateNodes(s.Nodes)
	_, objErrs := decodeObjects(s, schedulerNames)
	return append(errs, objErrs...)
}

func validateNodes(nodes []NodeSpec) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("nodes")
	if len(nodes) == 0 {
		errs = append(errs, field.Required(path, "a scenario needs at least one node"))
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
		if n.Count != nil && *n.Count < 1 {
			errs = append(errs, field.Invalid(p.Child("count"), *n.Count, "must be at least 1"))
		}
		errs = append(errs, metav1validation.ValidateLabels(n.Labels, p.Child("labels"))...)
		errs = append(errs, validateTaints(n.Taints, p.Child("taints"))...)
		errs = append(errs, validateAllocatable(n.Allocatable, p.Child("allocatable"))...)
		if n.Name == "" {
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
		if r.name == "pods" && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, string(r.value), "must be a whole number"))
		}
	}
	return errs
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
	nodes := sets.New[string]()
	for _, n := range s.Nodes {
		nodes.Insert(nodeNames(n)...)
	}
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
		}
		if err != nil {
			errs = append(errs, field.Invalid(p, kind, err.Error()))
			continue
		}
		errs = append(errs, validateMeta(meta, p.Child("metadata"))...)
		switch {
		case w.Pod != nil:
			w.Pod.APIVersion, w.Pod.Kind = want, kind
			errs = append(errs, validatePodSpec(&w.Pod.Spec, p.Child("spec"), nodes, schedulerNames)...)
		case w.ReplicaSet != nil:
			w.ReplicaSet.APIVersion, w.ReplicaSet.Kind = want, kind
			errs = append(errs, validateReplicas(w.ReplicaSet.Spec.Replicas, p.Child("spec", "replicas"))...)
			errs = append(errs, validatePodSpec(&w.ReplicaSet.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			defaultSelector(w.ReplicaSet.Name, &w.ReplicaSet.Spec.Selector, &w.ReplicaSet.Spec.Template)
		case w.Deployment != nil:
			w.Deployment.APIVersion, w.Deployment.Kind = want, kind
			errs = append(errs, validateReplicas(w.Deployment.Spec.Replicas, p.Child("spec", "replicas"))...)
			errs = append(errs, validatePodSpec(&w.Deployment.Spec.Template.Spec, p.Child("spec", "template", "spec"), nodes, schedulerNames)...)
			defaultSelector(w.Deployment.Name, &w.Deployment.Spec.Selector, &w.Deployment.Spec.Template)
		}
		out = append(out, w)
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
	if replicas != nil && *replicas < 0 {
		return field.ErrorList{field.Invalid(path, *replicas, "must not be negative")}
	}
	return nil
}

func validatePodSpec(spec *corev1.PodSpec, path *field.Path, nodes sets.Set[string], schedulerNames []string) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	if spec.NodeName != "" {
		if !nodes.Has(spec.NodeName) {
			errs = append(errs, field.NotFound(path.Child("nodeName"), spec.NodeName))
		}
		return errs // bound already: no scheduler involved
	}
	if spec.SchedulerName != "" && len(schedulerNames) > 0 && !slices.Contains(schedulerNames, spec.SchedulerName) {
		errs = append(errs, field.NotSupported(path.Child("schedulerName"), spec.SchedulerName, schedulerNames))
	}
	return errs
}
