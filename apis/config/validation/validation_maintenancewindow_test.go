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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func validMaintenance() *config.MaintenanceWindowArgs {
	return &config.MaintenanceWindowArgs{
		AnnotationKey:          "scheduling.adminsched.io/maintenance-window",
		AvoidWithin:            metav1.Duration{Duration: time.Hour},
		Horizon:                metav1.Duration{Duration: 24 * time.Hour},
		IgnoreDaemonSetPods:    true,
		ExemptPodSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kured"}},
		RuntimeAware:           true,
		RuntimeMargin:          metav1.Duration{Duration: 10 * time.Minute},
		ProviderSignals:        true,
		ProviderWindowDuration: metav1.Duration{Duration: time.Hour},
		NodeConditions:         true,
		PlannedWithoutTime:     config.PlannedAvoid,
		Karpenter:              true,
	}
}

func TestValidateMaintenanceWindowArgs(t *testing.T) {
	p := "profiles[0].pluginConfig[0].args."
	tests := []struct {
		name     string
		edit     func(*config.MaintenanceWindowArgs)
		wantErrs field.ErrorList
	}{
		{name: "valid", edit: func(*config.MaintenanceWindowArgs) {}},
		{name: "zero durations are valid", edit: func(a *config.MaintenanceWindowArgs) {
			a.AvoidWithin, a.Horizon = metav1.Duration{}, metav1.Duration{}
		}},
		{name: "a key without prefix is valid", edit: func(a *config.MaintenanceWindowArgs) { a.AnnotationKey = "maintenance" }},
		{
			name:     "empty annotation key",
			edit:     func(a *config.MaintenanceWindowArgs) { a.AnnotationKey = "" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p + "annotationKey", BadValue: ""}},
		},
		{
			name:     "invalid annotation key",
			edit:     func(a *config.MaintenanceWindowArgs) { a.AnnotationKey = "maintenance window" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "annotationKey", BadValue: "maintenance window"}},
		},
		{
			name:     "negative avoidWithin",
			edit:     func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = -time.Minute },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "avoidWithin", BadValue: "-1m0s"}},
		},
		{
			name:     "negative horizon",
			edit:     func(a *config.MaintenanceWindowArgs) { a.Horizon.Duration = -time.Hour },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "horizon", BadValue: "-1h0m0s"}},
		},
		{
			name:     "absurd horizon",
			edit:     func(a *config.MaintenanceWindowArgs) { a.Horizon.Duration = 10 * MaxMaintenanceLookahead },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "horizon", BadValue: "87600h0m0s"}},
		},
		{
			// Guards the upper bound's comparison (> a year, not >= a year) for
			// both durations: exactly a year is allowed.
			name: "a year exactly is valid",
			edit: func(a *config.MaintenanceWindowArgs) {
				a.AvoidWithin.Duration, a.Horizon.Duration = MaxMaintenanceLookahead, MaxMaintenanceLookahead
			},
		},
		{
			// Guards that avoidWithin, not only horizon, is bounded above.
			name: "avoidWithin a nanosecond over a year",
			edit: func(a *config.MaintenanceWindowArgs) {
				a.AvoidWithin.Duration = MaxMaintenanceLookahead + time.Nanosecond
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "avoidWithin", BadValue: "8760h0m0.000000001s"}},
		},
		{name: "zero runtimeMargin is valid", edit: func(a *config.MaintenanceWindowArgs) { a.RuntimeMargin = metav1.Duration{} }},
		{
			name:     "negative runtimeMargin",
			edit:     func(a *config.MaintenanceWindowArgs) { a.RuntimeMargin.Duration = -time.Second },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "runtimeMargin", BadValue: "-1s"}},
		},
		{
			name: "runtimeMargin over a year",
			edit: func(a *config.MaintenanceWindowArgs) {
				a.RuntimeMargin.Duration = MaxMaintenanceLookahead + time.Second
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "runtimeMargin", BadValue: "8760h0m1s"}},
		},
		{
			name:     "zero providerWindowDuration",
			edit:     func(a *config.MaintenanceWindowArgs) { a.ProviderWindowDuration = metav1.Duration{} },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "providerWindowDuration", BadValue: "0s"}},
		},
		{
			name:     "negative providerWindowDuration",
			edit:     func(a *config.MaintenanceWindowArgs) { a.ProviderWindowDuration.Duration = -time.Hour },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "providerWindowDuration", BadValue: "-1h0m0s"}},
		},
		{
			name:     "providerWindowDuration over a year",
			edit:     func(a *config.MaintenanceWindowArgs) { a.ProviderWindowDuration.Duration = 2 * MaxMaintenanceLookahead },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "providerWindowDuration", BadValue: "17520h0m0s"}},
		},
		{
			name: "invalid exemptPodSelector",
			edit: func(a *config.MaintenanceWindowArgs) {
				a.ExemptPodSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p + "exemptPodSelector.matchExpressions[0].operator", BadValue: metav1.LabelSelectorOperator("Near")}},
		},
		{name: "plannedWithoutTime Score is valid", edit: func(a *config.MaintenanceWindowArgs) { a.PlannedWithoutTime = config.PlannedScore }},
		{
			name:     "plannedWithoutTime in the wrong case",
			edit:     func(a *config.MaintenanceWindowArgs) { a.PlannedWithoutTime = "avoid" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeNotSupported, Field: p + "plannedWithoutTime", BadValue: config.PlannedWithoutTime("avoid")}},
		},
		{
			name:     "empty plannedWithoutTime",
			edit:     func(a *config.MaintenanceWindowArgs) { a.PlannedWithoutTime = "" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeNotSupported, Field: p + "plannedWithoutTime", BadValue: config.PlannedWithoutTime("")}},
		},
		{
			name: "sources switched off are valid",
			edit: func(a *config.MaintenanceWindowArgs) {
				a.NodeConditions, a.Karpenter, a.ProviderSignals = false, false, false
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := validMaintenance()
			tc.edit(args)
			err := ValidateMaintenanceWindowArgs(argsPath, args)
			if diff := cmp.Diff(tc.wantErrs, fieldErrors(t, err), cmpopts.IgnoreFields(field.Error{}, "Detail", "Origin")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateMaintenanceWindowArgsMessages(t *testing.T) {
	args := validMaintenance()
	args.AvoidWithin.Duration = -time.Minute
	err := ValidatePluginArgs(argsPath, config.MaintenanceWindowName, args)
	want := `profiles[0].pluginConfig[0].args.avoidWithin: Invalid value: "-1m0s": must not be negative`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want it to contain %q", err, want)
	}
}
