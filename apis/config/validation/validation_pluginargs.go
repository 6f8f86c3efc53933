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

// Package validation checks plugin args after defaulting and conversion, with
// field paths rooted where the caller says the args live.
package validation

import (
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// supportedScoringModes lists the modes NodeLessPods knows, in the order
// error messages give them.
var supportedScoringModes = []string{string(config.NodeLessPodsLeastPods), string(config.NodeLessPodsMostPods)}

// ValidateNodeLessPodsArgs returns every problem of args as one aggregate
// error, or nil. path is where the args live, for example
// field.NewPath("profiles").Index(0).Child("pluginConfig").Index(1).Child("args").
func ValidateNodeLessPodsArgs(path *field.Path, args *config.NodeLessPodsArgs) error {
	var allErrs field.ErrorList
	switch args.Mode {
	case config.NodeLessPodsLeastPods, config.NodeLessPodsMostPods:
	default:
		allErrs = append(allErrs, field.NotSupported(path.Child("mode"), args.Mode, supportedScoringModes))
	}
	if args.PodSelector != nil {
		allErrs = append(allErrs, validateSelector(path.Child("podSelector"), args.PodSelector)...)
	}
	allErrs = append(allErrs, validateNamespaces(path.Child("namespaces"), args.Namespaces)...)
	return allErrs.ToAggregate()
}

func validateNamespaces(path *field.Path, namespaces []string) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, ns := range namespaces {
		idxPath := path.Index(i)
		for _, msg := range validation.ValidateNamespaceName(ns, false) {
			allErrs = append(allErrs, field.Invalid(idxPath, ns, msg))
		}
		if seen.Has(ns) {
			allErrs = append(allErrs, field.Duplicate(idxPath, ns))
		}
		seen.Insert(ns)
	}
	return allErrs
}
