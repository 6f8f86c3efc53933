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

package validation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

const (
	// MinPlacementWeight and MaxPlacementWeight bound a Prefer rule's weight,
	// as for preferred node affinity terms.
	MinPlacementWeight = 1
	MaxPlacementWeight = 100
)

var supportedPlacementActions = []string{string(config.PlacementRequire), string(config.PlacementPrefer)}

// ValidatePlacementPolicyArgs returns every problem of args as one aggregate
// error, or nil. path is where the args live.
func ValidatePlacementPolicyArgs(path *field.Path, args *config.PlacementPolicyArgs) error {
	var allErrs field.ErrorList
	names := sets.New[string]()
	rulesPath := path.Child("rules")
	for i := range args.Rules {
		r := &args.Rules[i]
		rp := rulesPath.Index(i)
		allErrs = append(allErrs, validateName(rp.Child("name"), r.Name, names, "every rule is named in the rejections it causes")...)
		allErrs = append(allErrs, validatePodSelection(rp, r.Namespaces, r.NamespaceSelector, r.PodSelector, "rule")...)
		if r.NodeSelector == nil {
			allErrs = append(allErrs, field.Required(rp.Child("nodeSelector"), "the nodes the rule requires or prefers"))
		} else {
			allErrs = append(allErrs, validateSelector(rp.Child("nodeSelector"), r.NodeSelector)...)
		}
		allErrs = append(allErrs, validateAction(rp, r)...)
	}
	allErrs = append(allErrs, validateNamespaces(path.Child("excludedNamespaces"), args.ExcludedNamespaces)...)
	return allErrs.ToAggregate()
}

// validateName checks a rule's or policy's name: a DNS-1123 label, unique;
// why says what the name is for when it is missing.
func validateName(path *field.Path, name string, seen sets.Set[string], why string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, why)}
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		allErrs = append(allErrs, field.Invalid(path, name, msg))
	}
	if seen.Has(name) {
		allErrs = append(allErrs, field.Duplicate(path, name))
	}
	seen.Insert(name)
	return allErrs
}

// validatePodSelection checks that a rule or policy (what) selects pods at
// all: one with no pod selection would apply to every pod, which is far more
// often a mistake than an intent (an empty namespaceSelector says "every
// namespace" on purpose).
func validatePodSelection(path *field.Path, namespaces []string, nsSelector, podSelector *metav1.LabelSelector, what string) field.ErrorList {
	if len(namespaces) == 0 && nsSelector == nil && podSelector == nil {
		return field.ErrorList{field.Required(path,
			"at least one of namespaces, namespaceSelector and podSelector selects the pods the "+what+" applies to")}
	}
	allErrs := validateNamespaces(path.Child("namespaces"), namespaces)
	if nsSelector != nil {
		allErrs = append(allErrs, validateSelector(path.Child("namespaceSelector"), nsSelector)...)
	}
	if podSelector != nil {
		allErrs = append(allErrs, validateSelector(path.Child("podSelector"), podSelector)...)
	}
	return allErrs
}

func validateSelector(path *field.Path, s *metav1.LabelSelector) field.ErrorList {
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, path)
}

func validateAction(path *field.Path, r *config.PlacementRule) field.ErrorList {
	switch r.Action {
	case config.PlacementRequire:
		if r.Weight != 0 {
			return field.ErrorList{field.Forbidden(path.Child("weight"), "only Prefer rules take a weight")}
		}
	case config.PlacementPrefer:
		if r.Weight < MinPlacementWeight || r.Weight > MaxPlacementWeight {
			return field.ErrorList{field.Invalid(path.Child("weight"), r.Weight,
				"must be in the range 1-100")}
		}
	case "":
		return field.ErrorList{field.Required(path.Child("action"), "supported values: \"Require\", \"Prefer\"")}
	default:
		return field.ErrorList{field.NotSupported(path.Child("action"), r.Action, supportedPlacementActions)}
	}
	return nil
}
