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

// Package validation checks what the NodePoolQuota CRD schema cannot say:
// resource names, non-negative quantities, label selectors, namespace names
// and a namespace claimed by two teams. The quota controller reports its
// errors in the Valid condition.
package validation

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// standardResources are the resources without a domain that pods request
// and a quota can count; hugepages-<size> is checked apart.
var standardResources = []string{
	string(corev1.ResourceCPU),
	string(corev1.ResourceMemory),
	string(corev1.ResourceEphemeralStorage),
	string(corev1.ResourcePods),
}

// allowedResources is what NotSupported lists for an unknown name.
var allowedResources = append(append([]string{}, standardResources...),
	corev1.ResourceHugePagesPrefix+"<size>", "<domain>/<name>")

// ValidateNodePoolQuota returns the errors of q's spec, with field paths
// from the object's root.
func ValidateNodePoolQuota(q *v1alpha1.NodePoolQuota) field.ErrorList {
	spec := field.NewPath("spec")
	errs := metav1validation.ValidateLabelSelector(&q.Spec.NodeSelector,
		metav1validation.LabelSelectorValidationOptions{}, spec.Child("nodeSelector"))
	// The team (by index) that first listed each namespace.
	owner := map[string]int{}
	for i, team := range q.Spec.Teams {
		path := spec.Child("teams").Index(i)
		for j, ns := range team.Namespaces {
			nsPath := path.Child("namespaces").Index(j)
			if msgs := content.IsDNS1123Label(ns); len(msgs) > 0 {
				errs = append(errs, field.Invalid(nsPath, ns,
					"a namespace name must be a DNS-1123 label: "+strings.Join(msgs, "; ")))
				continue
			}
			if first, ok := owner[ns]; ok {
				err := field.Duplicate(nsPath, ns)
				err.Detail = fmt.Sprintf("already in team %q (spec.teams[%d]): a namespace belongs to one team",
					q.Spec.Teams[first].Name, first)
				errs = append(errs, err)
				continue
			}
			owner[ns] = i
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(team.NamespaceSelector,
			metav1validation.LabelSelectorValidationOptions{}, path.Child("namespaceSelector"))...)
		errs = append(errs, validateLimits(team.Limits, path.Child("limits"))...)
	}
	return errs
}

func validateLimits(limits corev1.ResourceList, path *field.Path) field.ErrorList {
	// Sorted, so that the errors come in the same order on every call.
	names := make([]string, 0, len(limits))
	for name := range limits {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var errs field.ErrorList
	for _, name := range names {
		keyPath := path.Key(name)
		errs = append(errs, validateResourceName(name, keyPath)...)
		if q := limits[corev1.ResourceName(name)]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(keyPath, q.String(), "a limit must be zero or more"))
		}
	}
	return errs
}

func validateResourceName(name string, path *field.Path) field.ErrorList {
	if strings.Contains(name, "/") {
		// An extended resource, e.g. nvidia.com/gpu.
		if msgs := content.IsQualifiedName(name); len(msgs) > 0 {
			return field.ErrorList{field.Invalid(path, name,
				"an extended resource must be a qualified name such as example.com/device: "+strings.Join(msgs, "; "))}
		}
		domain, _, _ := strings.Cut(name, "/")
		if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
			return field.ErrorList{field.Invalid(path, name,
				"the kubernetes.io domain is for native resources, which pods do not request by this name; use cpu, memory, ephemeral-storage, pods or hugepages-<size>")}
		}
		return nil
	}
	for _, std := range standardResources {
		if name == std {
			return nil
		}
	}
	if size, ok := strings.CutPrefix(name, corev1.ResourceHugePagesPrefix); ok {
		if q, err := resource.ParseQuantity(size); err != nil || q.Sign() <= 0 {
			return field.ErrorList{field.Invalid(path, name,
				"the page size of hugepages-<size> must be a positive quantity such as 2Mi or 1Gi")}
		}
		return nil
	}
	return field.ErrorList{field.NotSupported(path, name, allowedResources)}
}
