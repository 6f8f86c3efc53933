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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestConvertOnDemandSharePolicy covers the two hand-written conversions:
// set blocks are copied field by field, omitted blocks become zero values
// internally, and the way back always sets both blocks.
func TestConvertOnDemandSharePolicy(t *testing.T) {
	scheme := newConversionScheme(t)
	full := &OnDemandShareArgs{Policies: []OnDemandSharePolicy{{
		Name:               "batch",
		Namespaces:         []string{"batch"},
		WorkloadKinds:      []WorkloadKind{WorkloadJob},
		MinOnDemandCount:   ptr.To[int32](2),
		MinOnDemandPercent: ptr.To[int32](10),
		Capacity: &CapacityClasses{
			Preset:          CapacityCustom,
			OnDemand:        []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"reserved"}}},
			Spot:            []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"spot"}}},
			SpotTolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
		},
		SpotWaitTimeout: &metav1.Duration{Duration: time.Minute},
		Recovery:        &SpotRecovery{Interval: &metav1.Duration{Duration: time.Hour}, MaxPodsPerInterval: ptr.To[int32](4)},
	}}}
	wantInternal := &config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{{
		Name:               "batch",
		Namespaces:         []string{"batch"},
		WorkloadKinds:      []config.WorkloadKind{config.WorkloadJob},
		MinOnDemandCount:   2,
		MinOnDemandPercent: 10,
		Capacity: config.CapacityClasses{
			Preset:          config.CapacityCustom,
			OnDemand:        full.Policies[0].Capacity.OnDemand,
			Spot:            full.Policies[0].Capacity.Spot,
			SpotTolerations: full.Policies[0].Capacity.SpotTolerations,
		},
		SpotWaitTimeout: metav1.Duration{Duration: time.Minute},
		Recovery:        config.SpotRecovery{Interval: metav1.Duration{Duration: time.Hour}, MaxPodsPerInterval: 4},
	}}}
	got := &config.OnDemandShareArgs{}
	if err := scheme.Convert(full, got, nil); err != nil {
		t.Fatalf("v1 to internal: %v", err)
	}
	if diff := cmp.Diff(wantInternal, got); diff != "" {
		t.Errorf("v1 to internal (-want, +got):\n%s", diff)
	}
	back := &OnDemandShareArgs{}
	if err := scheme.Convert(got, back, nil); err != nil {
		t.Fatalf("internal to v1: %v", err)
	}
	if diff := cmp.Diff(full.Policies, back.Policies); diff != "" {
		t.Errorf("round trip (-want, +got):\n%s", diff)
	}

	omitted := &OnDemandShareArgs{Policies: []OnDemandSharePolicy{{Name: "web"}}}
	gotOmitted := &config.OnDemandShareArgs{}
	if err := scheme.Convert(omitted, gotOmitted, nil); err != nil {
		t.Fatalf("omitted blocks: %v", err)
	}
	wantOmitted := &config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{{Name: "web"}}}
	if diff := cmp.Diff(wantOmitted, gotOmitted); diff != "" {
		t.Errorf("omitted blocks (-want, +got):\n%s", diff)
	}
}

func TestSetDefaults_OnDemandShareArgs(t *testing.T) {
	in := &OnDemandShareArgs{Policies: []OnDemandSharePolicy{
		{Name: "empty"},
		{
			Name:          "partial",
			WorkloadKinds: []WorkloadKind{WorkloadReplicaSet},
			Capacity:      &CapacityClasses{SpotTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
			Recovery:      &SpotRecovery{Interval: &metav1.Duration{}},
		},
	}}
	SetObjectDefaults_OnDemandShareArgs(in)
	want := []OnDemandSharePolicy{
		{
			Name:               "empty",
			WorkloadKinds:      []WorkloadKind{WorkloadDeployment, WorkloadStatefulSet, WorkloadJob},
			MinOnDemandCount:   ptr.To[int32](0),
			MinOnDemandPercent: ptr.To[int32](0),
			Capacity:           &CapacityClasses{Preset: CapacityKarpenter},
			SpotWaitTimeout:    &metav1.Duration{Duration: 5 * time.Minute},
			Recovery:           &SpotRecovery{Interval: &metav1.Duration{Duration: 10 * time.Minute}, MaxPodsPerInterval: ptr.To[int32](1)},
		},
		{
			Name:               "partial",
			WorkloadKinds:      []WorkloadKind{WorkloadReplicaSet},
			MinOnDemandCount:   ptr.To[int32](0),
			MinOnDemandPercent: ptr.To[int32](0),
			Capacity: &CapacityClasses{Preset: CapacityKarpenter,
				SpotTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
			SpotWaitTimeout: &metav1.Duration{Duration: 5 * time.Minute},
			// An explicit 0s interval (recovery off) is kept.
			Recovery: &SpotRecovery{Interval: &metav1.Duration{}, MaxPodsPerInterval: ptr.To[int32](1)},
		},
	}
	if diff := cmp.Diff(want, in.Policies); diff != "" {
		t.Errorf("defaulted (-want, +got):\n%s", diff)
	}
}
