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

package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

type defaultingTestCase struct {
	name string
	in   *NodeLessPodsArgs
	want *NodeLessPodsArgs
}

// defaultingTestCases returns fresh cases on each call, so that no test can
// see another test's mutations.
func defaultingTestCases() []defaultingTestCase {
	return []defaultingTestCase{
		{
			name: "empty args get every default",
			in:   &NodeLessPodsArgs{},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
		},
		{
			name: "explicit values are kept",
			in: &NodeLessPodsArgs{
				Mode:                NodeLessPodsMostPods,
				IgnoreDaemonSetPods: ptr.To(false),
				RelativeToCapacity:  ptr.To(true),
			},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsMostPods,
				IgnoreDaemonSetPods: ptr.To(false),
				RelativeToCapacity:  ptr.To(true),
			},
		},
		{
			name: "only mode set",
			in:   &NodeLessPodsArgs{Mode: NodeLessPodsMostPods},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsMostPods,
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
		},
		{
			name: "only ignoreDaemonSetPods=false set",
			in:   &NodeLessPodsArgs{IgnoreDaemonSetPods: ptr.To(false)},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: ptr.To(false),
				RelativeToCapacity:  ptr.To(false),
			},
		},
		{
			name: "only relativeToCapacity=true set",
			in:   &NodeLessPodsArgs{RelativeToCapacity: ptr.To(true)},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(true),
			},
		},
		{
			name: "selector and namespaces are neither defaulted nor touched",
			in: &NodeLessPodsArgs{
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Namespaces:  []string{"a", "b"},
			},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				PodSelector:         &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Namespaces:          []string{"a", "b"},
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
		},
		{
			name: "an empty selector and empty namespaces stay empty, not nil",
			in: &NodeLessPodsArgs{
				PodSelector: &metav1.LabelSelector{},
				Namespaces:  []string{},
			},
			want: &NodeLessPodsArgs{
				Mode:                NodeLessPodsLeastPods,
				PodSelector:         &metav1.LabelSelector{},
				Namespaces:          []string{},
				IgnoreDaemonSetPods: ptr.To(true),
				RelativeToCapacity:  ptr.To(false),
			},
		},
	}
}

func TestSetDefaults_NodeLessPodsArgs(t *testing.T) {
	for _, tc := range defaultingTestCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			SetDefaults_NodeLessPodsArgs(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_NodeLessPodsArgs (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestSetObjectDefaults_NodeLessPodsArgs(t *testing.T) {
	for _, tc := range defaultingTestCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			SetObjectDefaults_NodeLessPodsArgs(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetObjectDefaults_NodeLessPodsArgs (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestSchemeDefault checks that AddToScheme registers the defaulter, which is
// what the scheduler's plugin-args scheme calls when it loads a config file.
func TestSchemeDefault(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tc := range defaultingTestCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			scheme.Default(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scheme.Default (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestSchemeDefaultNeedsRegistration is the control for TestSchemeDefault: a
// scheme without AddToScheme leaves the object alone, so TestSchemeDefault can
// only pass through the registered defaulter.
func TestSchemeDefaultNeedsRegistration(t *testing.T) {
	scheme := runtime.NewScheme()
	got := &NodeLessPodsArgs{}
	scheme.Default(got)
	if diff := cmp.Diff(&NodeLessPodsArgs{}, got); diff != "" {
		t.Errorf("scheme.Default without AddToScheme changed the args (-want, +got):\n%s", diff)
	}
}

func TestSetDefaults_PlacementPolicyArgs(t *testing.T) {
	tests := []struct {
		name string
		in   *PlacementPolicyArgs
		want *PlacementPolicyArgs
	}{
		{
			name: "empty args",
			in:   &PlacementPolicyArgs{},
			want: &PlacementPolicyArgs{IgnoreDaemonSetPods: ptr.To(true)},
		},
		{
			name: "Prefer rules get weight 1, Require rules none",
			in: &PlacementPolicyArgs{Rules: []PlacementRule{
				{Name: "r", Action: PlacementRequire},
				{Name: "p", Action: PlacementPrefer},
				{Name: "w", Action: PlacementPrefer, Weight: ptr.To[int32](30)},
				{Name: "u", Action: "Unknown"},
			}},
			want: &PlacementPolicyArgs{
				Rules: []PlacementRule{
					{Name: "r", Action: PlacementRequire},
					{Name: "p", Action: PlacementPrefer, Weight: ptr.To[int32](1)},
					{Name: "w", Action: PlacementPrefer, Weight: ptr.To[int32](30)},
					{Name: "u", Action: "Unknown"},
				},
				IgnoreDaemonSetPods: ptr.To(true),
			},
		},
		{
			name: "set fields are kept",
			in:   &PlacementPolicyArgs{IgnoreDaemonSetPods: ptr.To(false), ExcludedNamespaces: []string{"kube-system"}},
			want: &PlacementPolicyArgs{IgnoreDaemonSetPods: ptr.To(false), ExcludedNamespaces: []string{"kube-system"}},
		},
	}
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			scheme.Default(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scheme.Default (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaults_MaintenanceWindowArgs(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	got := &MaintenanceWindowArgs{}
	scheme.Default(got)
	want := &MaintenanceWindowArgs{
		AnnotationKey:          ptr.To("scheduling.adminsched.io/maintenance-window"),
		AvoidWithin:            &metav1.Duration{},
		Horizon:                &metav1.Duration{Duration: 24 * time.Hour},
		IgnoreDaemonSetPods:    ptr.To(true),
		RuntimeAware:           ptr.To(true),
		RuntimeMargin:          &metav1.Duration{Duration: 10 * time.Minute},
		ProviderSignals:        ptr.To(true),
		ProviderWindowDuration: &metav1.Duration{Duration: time.Hour},
		NodeConditions:         ptr.To(true),
		PlannedWithoutTime:     PlannedAvoid,
		Karpenter:              ptr.To(true),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want, +got):\n%s", diff)
	}
	// Set fields keep their values, false and 0s included.
	set := &MaintenanceWindowArgs{AnnotationKey: ptr.To("k"), AvoidWithin: &metav1.Duration{Duration: time.Hour},
		Horizon: &metav1.Duration{}, IgnoreDaemonSetPods: ptr.To(false), RuntimeAware: ptr.To(false),
		RuntimeMargin: &metav1.Duration{}, ProviderSignals: ptr.To(false),
		ProviderWindowDuration: &metav1.Duration{Duration: 4 * time.Hour},
		NodeConditions:         ptr.To(false), PlannedWithoutTime: PlannedScore, Karpenter: ptr.To(false)}
	got = set.DeepCopy()
	scheme.Default(got)
	if diff := cmp.Diff(set, got); diff != "" {
		t.Errorf("set fields changed (-want, +got):\n%s", diff)
	}
}
