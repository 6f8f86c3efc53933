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

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestOwnMessages checks the exact text of every message these validators
// write themselves (the apimachinery helpers' texts are theirs to keep): what
// an operator reads must name the field and say what is wanted. The other
// tests compare errors without their detail, so without this one a message
// could be emptied and nothing would fail (hack/mutate found them).
func TestOwnMessages(t *testing.T) {
	tests := []struct {
		name    string
		err     func() error
		wantErr string
	}{
		{
			name: "MaintenanceWindow annotationKey missing",
			err: func() error {
				a := validMaintenance()
				a.AnnotationKey = ""
				return ValidateMaintenanceWindowArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.annotationKey: Required value: the node annotation that announces maintenance windows`,
		},
		{
			name: "MaintenanceWindow horizon over a year",
			err: func() error {
				a := validMaintenance()
				a.Horizon.Duration = 2 * MaxMaintenanceLookahead
				return ValidateMaintenanceWindowArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.horizon: Invalid value: "17520h0m0s": must be at most 8760h0m0s (a year)`,
		},
		{
			name: "MaintenanceWindow plannedWithoutTime unknown",
			err: func() error {
				a := validMaintenance()
				a.PlannedWithoutTime = "Ignore"
				return ValidateMaintenanceWindowArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.plannedWithoutTime: Unsupported value: "Ignore": supported values: "Avoid", "Score"`,
		},
		{
			name: "PlacementPolicy rule without a name",
			err: func() error {
				a := validPolicy()
				a.Rules[0].Name = ""
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.rules[0].name: Required value: every rule is named in the rejections it causes`,
		},
		{
			name: "PlacementPolicy rule that selects no pods",
			err: func() error {
				a := validPolicy()
				a.Rules[1].PodSelector = nil
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.rules[1]: Required value: at least one of namespaces, namespaceSelector and podSelector selects the pods the rule applies to`,
		},
		{
			name: "PlacementPolicy rule without nodeSelector",
			err: func() error {
				a := validPolicy()
				a.Rules[0].NodeSelector = nil
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.rules[0].nodeSelector: Required value: the nodes the rule requires or prefers`,
		},
		{
			name: "PlacementPolicy Require rule with a weight",
			err: func() error {
				a := validPolicy()
				a.Rules[0].Weight = 5
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.rules[0].weight: Forbidden: only Prefer rules take a weight`,
		},
		{
			name: "PlacementPolicy rule without action",
			err: func() error {
				a := validPolicy()
				a.Rules[0].Action = ""
				return ValidatePlacementPolicyArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.rules[0].action: Required value: supported values: "Require", "Prefer"`,
		},
		{
			name: "NodeLessPods unknown mode through the dispatch",
			err: func() error {
				return ValidatePluginArgs(argsPath, config.NodeLessPodsName, &config.NodeLessPodsArgs{Mode: "Most"})
			},
			wantErr: `profiles[0].pluginConfig[0].args.mode: Unsupported value: "Most": supported values: "LeastPods", "MostPods"`,
		},
		{
			name: "OnDemandShare percent out of range",
			err: func() error {
				a := validShare()
				a.Policies[0].MinOnDemandPercent = 130
				return ValidateOnDemandShareArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.policies[0].minOnDemandPercent: Invalid value: 130: must be in the range 0-100`,
		},
		{
			name: "OnDemandShare minimum of nothing",
			err: func() error {
				a := validShare()
				a.Policies[0].MinOnDemandPercent = 0
				return ValidateOnDemandShareArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.policies[0].minOnDemandPercent: Required value: a policy needs minOnDemandCount or minOnDemandPercent above 0: with both at 0 it asks for nothing`,
		},
		{
			name: "OnDemandShare requirements with a preset",
			err: func() error {
				a := validShare()
				a.Policies[0].Capacity.OnDemand = a.Policies[1].Capacity.OnDemand
				return ValidateOnDemandShareArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.policies[0].capacity.onDemand: Forbidden: only the Custom preset takes node requirements; the Karpenter preset has its own`,
		},
		{
			name: "OnDemandShare spot wait of a month",
			err: func() error {
				a := validShare()
				a.Policies[0].SpotWaitTimeout.Duration = 30 * 24 * time.Hour
				return ValidateOnDemandShareArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.policies[0].spotWaitTimeout: Invalid value: "720h0m0s": must be in the range 0s-168h0m0s (a week); 0s turns it off`,
		},
		{
			name: "OnDemandShare custom classes sharing a node",
			err: func() error {
				a := validShare()
				a.Policies[1].Capacity.Spot[0].Values = []string{"reserved"}
				return ValidateOnDemandShareArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.policies[1].capacity.spot: Invalid value: [{"key":"pool","operator":"In","values":["reserved"]}]: matches a node that onDemand matches too (labels map[pool:reserved]): the two classes must not share nodes`,
		},
		{
			name: "OnDemandShare policy without a name",
			err: func() error {
				a := validShare()
				a.Policies[0].Name = ""
				return ValidateOnDemandShareArgs(argsPath, a)
			},
			wantErr: `profiles[0].pluginConfig[0].args.policies[0].name: Required value: every policy is named in the labels, events and metrics of the pods it decides`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil {
				t.Fatalf("got no error, want %q", tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error message (-want, +got):\n%s", diff)
			}
		})
	}
}
