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
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Allocatable is a node's allocatable (and capacity) resources.
type Allocatable struct {
	// CPU defaults to DefaultCPU.
	CPU Quantity `json:"cpu,omitempty"`
	// Memory defaults to DefaultMemory.
	Memory Quantity `json:"memory,omitempty"`
	// Pods defaults to DefaultPods.
	Pods Quantity `json:"pods,omitempty"`
	// Extended are extended resources (nvidia.com/gpu: 4), which a quota
	// or a pod's requests may name. A map of their own rather than keys
	// beside cpu: the strict decoder then still names a typo of cpu.
	Extended map[corev1.ResourceName]Quantity `json:"extended,omitempty"`
}

// Quantity is a resource quantity as written in the file, a YAML number or
// string. Validation parses it, so that a bad value is reported with its field.
type Quantity string

// UnmarshalJSON accepts a JSON string or number.
func (q *Quantity) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		*q = ""
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		s, err := strconv.Unquote(string(data))
		if err != nil {
			return err
		}
		*q = Quantity(s)
		return nil
	}
	if _, err := strconv.ParseFloat(string(data), 64); err != nil {
		return fmt.Errorf("quantity must be a number or a string, got %s", data)
	}
	*q = Quantity(data)
	return nil
}

func validateAllocatable(a Allocatable, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	type named struct {
		name  string
		path  *field.Path
		value Quantity
	}
	all := []named{{"cpu", path.Child("cpu"), a.CPU}, {"memory", path.Child("memory"), a.Memory}, {"pods", path.Child("pods"), a.Pods}}
	for _, name := range slices.Sorted(maps.Keys(a.Extended)) {
		p := path.Child("extended").Key(string(name))
		if msg := extendedResourceName(name); msg != "" {
			errs = append(errs, field.Invalid(p, string(name), msg))
			continue
		}
		if a.Extended[name] == "" {
			errs = append(errs, field.Required(p, "a whole number"))
			continue
		}
		all = append(all, named{string(name), p, a.Extended[name]})
	}
	for _, r := range all {
		if r.value == "" {
			continue
		}
		p := r.path
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
		// The API server takes whole extended resources only.
		if r.name != "cpu" && r.name != "memory" && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, string(r.value), "must be a whole number"))
		}
	}
	return errs
}

// extendedResourceName says why name is no extended resource name, or "":
// a qualified name with a domain outside kubernetes.io, and not quota's
// "requests." prefix, as the API server wants of a node's.
func extendedResourceName(name corev1.ResourceName) string {
	prefix, _, ok := strings.Cut(string(name), "/")
	if !ok || strings.HasSuffix(prefix, "kubernetes.io") || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return "must be an extended resource name: <domain>/<name>, not in kubernetes.io (cpu, memory and pods have fields of their own)"
	}
	if msgs := validation.IsQualifiedName(string(name)); len(msgs) > 0 {
		return strings.Join(msgs, "; ")
	}
	return ""
}

func quantityOr(q Quantity, def string) resource.Quantity {
	if q == "" {
		q = Quantity(def)
	}
	return resource.MustParse(string(q))
}
