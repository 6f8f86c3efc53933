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

package policyevictor

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateArgs is the registry's validator. The descheduler validates
// before it defaults, so the fields the defaulter fills may be unset here.
func ValidateArgs(obj runtime.Object) error {
	args, ok := obj.(*PolicyEvictorArgs)
	if !ok {
		return fmt.Errorf("want args of type PolicyEvictorArgs, got %T", obj)
	}
	return validateArgs(args).ToAggregate()
}

func validateArgs(args *PolicyEvictorArgs) field.ErrorList {
	var errs field.ErrorList
	switch args.Preferred {
	case "", PreferredRespect, PreferredIgnore:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("preferred"), args.Preferred,
			[]PreferredMode{PreferredRespect, PreferredIgnore}))
	}
	if args.AdmittedTTL != nil && args.AdmittedTTL.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("admittedTTL"), args.AdmittedTTL.Duration.String(), "must be positive"))
	}
	if args.NodeSelector != "" {
		if _, err := labels.Parse(args.NodeSelector); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("nodeSelector"), args.NodeSelector, err.Error()))
		}
	}
	_, loadErrs := loadPolicies(args)
	return append(errs, loadErrs...)
}
