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
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Object is one Kubernetes object of a scenario, as written in the file.
type Object map[string]interface{}

// decoded is one object of the scenario as validation read it: typed for
// the kinds of the kind table, unstructured for any other.
type decoded struct {
	kind  string
	typed object
	other *unstructured.Unstructured
}

func (d decoded) meta() (namespace, name string) {
	if d.typed != nil {
		return d.typed.GetNamespace(), d.typed.GetName()
	}
	return d.other.GetNamespace(), d.other.GetName()
}

// key is how steps name the object: a namespace left out is
// workload.DefaultNamespace, as steps default theirs.
func (d decoded) key() string {
	ns, name := d.meta()
	return objectKey(d.kind, orDefault(ns), name)
}

// namespaces is the namespace the object creates (a Namespace) or is in;
// none for a cluster-scoped kind of the kind table. A kind the table does
// not know may be namespaced, and then it gets workload.DefaultNamespace, as the
// apply step gives it.
func (d decoded) namespaces() []string {
	ns, name := d.meta()
	switch {
	case d.other != nil && d.kind == "Namespace":
		return []string{name}
	case d.typed != nil && !kinds[d.kind].namespaced:
		return nil
	}
	return []string{orDefault(ns)}
}

// objectKey is how steps name the objects of a scenario.
func objectKey(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }

func orDefault(namespace string) string {
	if namespace == "" {
		return workload.DefaultNamespace
	}
	return namespace
}

// decodeObjects decodes each object, strictly for the kinds of the kind
// table, and checks what the playground relies on. nodes is nil when the
// node specs are too large to expand (spec.nodeName is not checked then).
func decodeObjects(objects []Object, nodes sets.Set[string], schedulerNames []string) ([]decoded, field.ErrorList) {
	var errs field.ErrorList
	var out []decoded
	pods := 0 // pods the objects make, for MaxPods
	for i, obj := range objects {
		p := field.NewPath("objects").Index(i)
		d, objErrs := decodeObject(obj, p)
		errs = append(errs, objErrs...)
		if d == nil {
			continue
		}
		out = append(out, *d)
		if d.typed == nil {
			continue
		}
		rule := kinds[d.kind]
		if rule.pods != nil {
			pods += rule.pods(d.typed, nodes.Len())
		}
		if rule.check != nil {
			errs = append(errs, rule.check(d.typed, p)...)
		}
		if rule.podSpec != nil {
			errs = append(errs, validatePodSpec(rule.podSpec(d.typed), podSpecPath(rule, p), nodes, schedulerNames)...)
		}
	}
	if pods > MaxPods {
		errs = append(errs, field.Invalid(field.NewPath("objects"), pods,
			fmt.Sprintf("pods in total (one per Pod, spec.replicas per ReplicaSet, Deployment and StatefulSet, completions or parallelism per Job, the node count per DaemonSet): must be at most %d", MaxPods)))
	}
	return out, errs
}

// decodeObject decodes one object, or returns nil with why it cannot.
func decodeObject(obj Object, p *field.Path) (*decoded, field.ErrorList) {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if kind == "" {
		return nil, field.ErrorList{field.Required(p.Child("kind"), "the object's kind, e.g. "+strings.Join(supportedKinds, ", ")+", or any kind the cluster serves")}
	}
	rule, known := kinds[kind]
	if known && apiVersion != "" && apiVersion != rule.apiVersion {
		return nil, field.ErrorList{field.NotSupported(p.Child("apiVersion"), apiVersion, []string{rule.apiVersion})}
	}
	if !known {
		if apiVersion == "" {
			return nil, field.ErrorList{field.Required(p.Child("apiVersion"), fmt.Sprintf("a %s is applied as written: name its group and version", kind))}
		}
		u := &unstructured.Unstructured{Object: deepCopyJSON(obj)}
		return &decoded{kind: kind, other: u}, validateMeta(u.GetNamespace(), u.GetName(), p.Child("metadata"))
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(p, kind, err.Error())}
	}
	typed := rule.new()
	if err := unmarshalStrict(data, typed); err != nil {
		return nil, invalidEach(p, kind, err)
	}
	return &decoded{kind: kind, typed: typed}, validateMeta(typed.GetNamespace(), typed.GetName(), p.Child("metadata"))
}

// invalidEach is one error at p per error err joins (each unknown field of
// an object), so that each line names the file and the object.
func invalidEach(p *field.Path, kind string, err error) field.ErrorList {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	var list field.ErrorList
	for _, e := range errs {
		list = append(list, field.Invalid(p, kind, e.Error()))
	}
	return list
}

// deepCopyJSON copies a decoded JSON object; a scenario's values are JSON
// values, which runtime.DeepCopyJSON requires (it panics on others).
func deepCopyJSON(obj Object) map[string]interface{} {
	data, _ := json.Marshal(obj)
	var out map[string]interface{}
	_ = json.Unmarshal(data, &out)
	return out
}

// validateMeta checks the name and the namespace, if any.
func validateMeta(namespace, name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(path.Child("name"), "generateName is not supported"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(path.Child("name"), name, msg))
		}
	}
	if namespace != "" {
		for _, msg := range validation.IsDNS1123Label(namespace) {
			errs = append(errs, field.Invalid(path.Child("namespace"), namespace, msg))
		}
	}
	return errs
}

func validateReplicas(replicas *int32, path *field.Path) field.ErrorList {
	if replicas != nil && (*replicas < 0 || *replicas > MaxPods) {
		return field.ErrorList{field.Invalid(path, *replicas, fmt.Sprintf("must be at least 0 and at most %d", MaxPods))}
	}
	return nil
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
	return append(errs, validateSchedulerName(spec, path, schedulerNames)...)
}

// validateSchedulerName checks that the pods of an unbound spec ask for one
// of schedulerNames, the profiles of the scheduler that runs them, if they
// ask for one; empty schedulerNames allow any.
func validateSchedulerName(spec *corev1.PodSpec, path *field.Path, schedulerNames []string) field.ErrorList {
	if spec.NodeName == "" && spec.SchedulerName != "" && len(schedulerNames) > 0 && !slices.Contains(schedulerNames, spec.SchedulerName) {
		return field.ErrorList{field.NotSupported(path.Child("schedulerName"), spec.SchedulerName, schedulerNames)}
	}
	return nil
}

// validateSchedulerNames is validateSchedulerName for the objects of a
// valid scenario, every one decoded, so that objects[i] is the file's
// objects[i]. File.Plan checks them so, once per scheduler config.
func validateSchedulerNames(objects []decoded, schedulerNames []string) field.ErrorList {
	var errs field.ErrorList
	for i, d := range objects {
		if rule := kinds[d.kind]; d.typed != nil && rule.podSpec != nil {
			p := podSpecPath(rule, field.NewPath("objects").Index(i))
			errs = append(errs, validateSchedulerName(rule.podSpec(d.typed), p, schedulerNames)...)
		}
	}
	return errs
}

// podSpecPath is the path of the pod spec of the object at p.
func podSpecPath(rule kindRule, p *field.Path) *field.Path {
	if rule.template != nil {
		return p.Child("spec", "template", "spec")
	}
	return p.Child("spec")
}
