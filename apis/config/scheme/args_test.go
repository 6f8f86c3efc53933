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

package scheme

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func TestPluginArgs(t *testing.T) {
	valid := &config.NodeLessPodsArgs{Mode: config.NodeLessPodsMostPods}
	tests := []struct {
		name    string
		obj     runtime.Object
		want    *config.NodeLessPodsArgs
		wantErr string
	}{
		{name: "nil gets the v1 defaults", obj: nil, want: &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, IgnoreDaemonSetPods: true}},
		{name: "typed nil gets the v1 defaults", obj: (*config.NodeLessPodsArgs)(nil), want: &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, IgnoreDaemonSetPods: true}},
		{name: "args are returned as they are", obj: valid, want: valid},
		{name: "another kind", obj: &config.PlacementPolicyArgs{}, wantErr: "want args of type NodeLessPodsArgs, got *config.PlacementPolicyArgs"},
		{name: "invalid args name the field", obj: &config.NodeLessPodsArgs{Mode: "Fewest"},
			wantErr: `invalid NodeLessPods args: mode: Unsupported value: "Fewest": supported values: "LeastPods", "MostPods"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PluginArgs[*config.NodeLessPodsArgs]("NodeLessPods", tc.obj)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultArgsOfEveryPlugin(t *testing.T) {
	for name, want := range map[string]runtime.Object{
		config.NodeLessPodsName:    &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods, IgnoreDaemonSetPods: true},
		config.PlacementPolicyName: &config.PlacementPolicyArgs{IgnoreDaemonSetPods: true},
		config.MaintenanceWindowName: &config.MaintenanceWindowArgs{
			AnnotationKey:          "scheduling.adminsched.io/maintenance-window",
			Horizon:                metav1.Duration{Duration: 24 * time.Hour},
			IgnoreDaemonSetPods:    true,
			RuntimeAware:           true,
			RuntimeMargin:          metav1.Duration{Duration: 10 * time.Minute},
			ProviderSignals:        true,
			ProviderWindowDuration: metav1.Duration{Duration: time.Hour},
			NodeConditions:         true,
			PlannedWithoutTime:     config.PlannedAvoid,
			Karpenter:              true,
		},
	} {
		got, err := DefaultArgs(name)
		if err != nil {
			t.Fatalf("DefaultArgs(%s): %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DefaultArgs(%s) (-want +got):\n%s", name, diff)
		}
	}
	if _, err := DefaultArgs("NoSuchPlugin"); err == nil {
		t.Errorf("DefaultArgs of an unknown plugin: got no error")
	}
}
