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
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// MaxMaintenanceLookahead bounds avoidWithin and horizon: a window planned
// further ahead than a year says nothing about where a pod should go now.
const MaxMaintenanceLookahead = 365 * 24 * time.Hour

// ValidateMaintenanceWindowArgs returns every problem of args as one
// aggregate error, or nil. path is where the args live.
func ValidateMaintenanceWindowArgs(path *field.Path, args *config.MaintenanceWindowArgs) error {
	var allErrs field.ErrorList
	keyPath := path.Child("annotationKey")
	if args.AnnotationKey == "" {
		allErrs = append(allErrs, field.Required(keyPath, "the node annotation that announces maintenance windows"))
	} else {
		for _, msg := range validation.IsQualifiedName(args.AnnotationKey) {
			allErrs = append(allErrs, field.Invalid(keyPath, args.AnnotationKey, msg))
		}
	}
	allErrs = append(allErrs, validateLookahead(path.Child("avoidWithin"), args.AvoidWithin)...)
	allErrs = append(allErrs, validateLookahead(path.Child("horizon"), args.Horizon)...)
	allErrs = append(allErrs, validateLookahead(path.Child("runtimeMargin"), args.RuntimeMargin)...)
	// A provider's window of no length would never block a node: the
	// provider says maintenance comes, so it lasts some time.
	durationPath := path.Child("providerWindowDuration")
	if args.ProviderWindowDuration.Duration == 0 {
		allErrs = append(allErrs, field.Invalid(durationPath, args.ProviderWindowDuration.Duration.String(),
			"must be positive: the length assumed for a provider's maintenance window"))
	} else {
		allErrs = append(allErrs, validateLookahead(durationPath, args.ProviderWindowDuration)...)
	}
	if args.ExemptPodSelector != nil {
		allErrs = append(allErrs, validateSelector(path.Child("exemptPodSelector"), args.ExemptPodSelector)...)
	}
	if !slices.Contains(supportedPlannedWithoutTime, string(args.PlannedWithoutTime)) {
		allErrs = append(allErrs, field.NotSupported(path.Child("plannedWithoutTime"), args.PlannedWithoutTime, supportedPlannedWithoutTime))
	}
	return allErrs.ToAggregate()
}

// supportedPlannedWithoutTime are the values plannedWithoutTime accepts.
var supportedPlannedWithoutTime = []string{string(config.PlannedAvoid), string(config.PlannedScore)}

func validateLookahead(path *field.Path, d metav1.Duration) field.ErrorList {
	switch {
	case d.Duration < 0:
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must not be negative")}
	case d.Duration > MaxMaintenanceLookahead:
		return field.ErrorList{field.Invalid(path, d.Duration.String(),
			fmt.Sprintf("must be at most %v (a year)", MaxMaintenanceLookahead))}
	}
	return nil
}
