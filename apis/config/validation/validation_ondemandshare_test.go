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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// validShare returns valid, defaulted internal args with a preset policy and
// a Custom one for the tests to break.
func validShare() *config.OnDemandShareArgs {
	policy := func(name string) config.OnDemandSharePolicy {
		return config.OnDemandSharePolicy{
			Name:               name,
			Namespaces:         []string{"shop"},
			WorkloadKinds:      []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet, config.WorkloadJob},
			MinOnDemandPercent: 30,
			Capacity:           config.CapacityClasses{Preset: config.CapacityKarpenter},
			SpotWaitTimeout:    metav1.Duration{Duration: 5 * time.Minute},
			Recovery:           config.SpotRecovery{Interval: metav1.Duration{Duration: 10 * time.Minute}, MaxPodsPerInterval: 1},
		}
	}
	custom := policy("batch")
	custom.MinOnDemandPercent, custom.MinOnDemandCount = 0, 2
	custom.Capacity = config.CapacityClasses{
		Preset:   config.CapacityCustom,
		OnDemand: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"reserved"}}},
		Spot:     []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"preemptible"}}},
		SpotTolerations: []v1.Toleration{
			{Key: "preemptible", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		},
	}
	return &config.OnDemandShareArgs{
		Policies:           []config.OnDemandSharePolicy{policy("web"), custom},
		ExcludedNamespaces: []string{"kube-system"},
	}
}

func TestValidateOnDemandShareArgs(t *testing.T) {
	p0 := "profiles[0].pluginConfig[0].args.policies[0]"
	p1 := "profiles[0].pluginConfig[0].args.policies[1]"
	tests := []struct {
		name     string
		edit     func(*config.OnDemandShareArgs)
		wantErrs field.ErrorList
	}{
		{name: "valid", edit: func(*config.OnDemandShareArgs) {}},
		{name: "no policies is valid", edit: func(a *config.OnDemandShareArgs) { a.Policies = nil }},
		{
			name:     "missing name",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].Name = "" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p0 + ".name"}},
		},
		{
			name:     "duplicate name",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[1].Name = "web" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeDuplicate, Field: p1 + ".name", BadValue: "web"}},
		},
		{
			name:     "no pod selection",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].Namespaces = nil },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p0}},
		},
		{
			name: "an empty namespaceSelector selects every namespace on purpose",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[0].Namespaces, a.Policies[0].NamespaceSelector = nil, &metav1.LabelSelector{}
			},
		},
		{
			name:     "unknown workload kind",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].WorkloadKinds[1] = "DaemonSet" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeNotSupported, Field: p0 + ".workloadKinds[1]", BadValue: config.WorkloadKind("DaemonSet")}},
		},
		{
			name:     "duplicate workload kind",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].WorkloadKinds[1] = config.WorkloadDeployment },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeDuplicate, Field: p0 + ".workloadKinds[1]", BadValue: config.WorkloadDeployment}},
		},
		{
			name:     "no workload kinds",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].WorkloadKinds = nil },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p0 + ".workloadKinds"}},
		},
		{
			name:     "percent above 100",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].MinOnDemandPercent = 130 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p0 + ".minOnDemandPercent", BadValue: int32(130)}},
		},
		{
			name:     "negative count",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[1].MinOnDemandCount = -1 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p1 + ".minOnDemandCount", BadValue: int32(-1)}},
		},
		{
			name:     "a minimum of nothing",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].MinOnDemandPercent = 0 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p0 + ".minOnDemandPercent"}},
		},
		{
			name:     "unknown preset",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].Capacity.Preset = "Azure" },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeNotSupported, Field: p0 + ".capacity.preset", BadValue: config.CapacityPreset("Azure")}},
		},
		{
			name: "requirements with a preset",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[0].Capacity.Spot = a.Policies[1].Capacity.Spot
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeForbidden, Field: p0 + ".capacity.spot"}},
		},
		{
			name:     "custom without spot",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[1].Capacity.Spot = nil },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p1 + ".capacity.spot"}},
		},
		{
			name: "custom classes that share a node",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[1].Capacity.Spot = []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpExists}}
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p1 + ".capacity.spot"}},
		},
		{
			name: "custom requirement with a bad operator and key",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[1].Capacity.OnDemand[0].Operator = "Equals"
				a.Policies[1].Capacity.OnDemand[0].Key = "bad key"
			},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: p1 + ".capacity.onDemand[0].key", BadValue: "bad key"},
				{Type: field.ErrorTypeNotSupported, Field: p1 + ".capacity.onDemand[0].operator", BadValue: v1.NodeSelectorOperator("Equals")},
			},
		},
		{
			name: "custom Gt without an integer",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[1].Capacity.OnDemand[0] = v1.NodeSelectorRequirement{Key: "tier", Operator: v1.NodeSelectorOpGt, Values: []string{"high"}}
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p1 + ".capacity.onDemand[0].values[0]", BadValue: "high"}},
		},
		{
			name: "custom In without values",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[1].Capacity.Spot[0].Values = nil
			},
			wantErrs: field.ErrorList{{Type: field.ErrorTypeRequired, Field: p1 + ".capacity.spot[0].values"}},
		},
		{
			name: "toleration Exists with a value and a bad effect",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[1].Capacity.SpotTolerations[0].Value = "x"
				a.Policies[1].Capacity.SpotTolerations[0].Effect = "NoRun"
			},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeForbidden, Field: p1 + ".capacity.spotTolerations[0].value"},
				{Type: field.ErrorTypeNotSupported, Field: p1 + ".capacity.spotTolerations[0].effect", BadValue: v1.TaintEffect("NoRun")},
			},
		},
		{
			name:     "negative spot wait",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].SpotWaitTimeout.Duration = -time.Second },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p0 + ".spotWaitTimeout", BadValue: "-1s"}},
		},
		{
			name:     "recovery interval over a week",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].Recovery.Interval.Duration = 8 * 24 * time.Hour },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p0 + ".recovery.interval", BadValue: "192h0m0s"}},
		},
		{
			name:     "no recoveries per interval",
			edit:     func(a *config.OnDemandShareArgs) { a.Policies[0].Recovery.MaxPodsPerInterval = 0 },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: p0 + ".recovery.maxPodsPerInterval", BadValue: int32(0)}},
		},
		{
			name: "recovery and waiting off are valid",
			edit: func(a *config.OnDemandShareArgs) {
				a.Policies[0].Recovery.Interval.Duration, a.Policies[0].SpotWaitTimeout.Duration = 0, 0
			},
		},
		{
			name:     "bad excluded namespace",
			edit:     func(a *config.OnDemandShareArgs) { a.ExcludedNamespaces = []string{"Kube_System"} },
			wantErrs: field.ErrorList{{Type: field.ErrorTypeInvalid, Field: "profiles[0].pluginConfig[0].args.excludedNamespaces[0]", BadValue: "Kube_System"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := validShare()
			tc.edit(args)
			err := ValidatePluginArgs(argsPath, config.OnDemandShareName, args)
			got := fieldErrors(t, err)
			ignore := cmpopts.IgnoreFields(field.Error{}, "Detail", "Origin")
			if tc.wantErrs != nil && len(got) == len(tc.wantErrs) {
				// BadValue is compared only where the case sets it.
				for i := range got {
					if tc.wantErrs[i].BadValue == nil {
						got[i].BadValue = nil
					}
				}
			}
			if diff := cmp.Diff(tc.wantErrs, got, ignore); diff != "" {
				t.Errorf("errors (-want, +got):\n%s", diff)
			}
		})
	}
}
