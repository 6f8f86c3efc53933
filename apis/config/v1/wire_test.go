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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	schedv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// TestEnumWireValues guards the exported enum constants, which builds that
// import this package use to write args in Go: each must be the word users
// write in YAML, and the same as the internal constant, since conversion
// copies the string as it is. hack/mutate found PlacementRequire and
// PlacementPrefer free to change: no test used their values.
func TestEnumWireValues(t *testing.T) {
	tests := []struct {
		name     string
		v1, wire string
		internal string
	}{
		{name: "LeastPods", v1: string(NodeLessPodsLeastPods), internal: string(config.NodeLessPodsLeastPods), wire: "LeastPods"},
		{name: "MostPods", v1: string(NodeLessPodsMostPods), internal: string(config.NodeLessPodsMostPods), wire: "MostPods"},
		{name: "Require", v1: string(PlacementRequire), internal: string(config.PlacementRequire), wire: "Require"},
		{name: "Prefer", v1: string(PlacementPrefer), internal: string(config.PlacementPrefer), wire: "Prefer"},
		{name: "Deployment", v1: string(WorkloadDeployment), internal: string(config.WorkloadDeployment), wire: "Deployment"},
		{name: "ReplicaSet", v1: string(WorkloadReplicaSet), internal: string(config.WorkloadReplicaSet), wire: "ReplicaSet"},
		{name: "StatefulSet", v1: string(WorkloadStatefulSet), internal: string(config.WorkloadStatefulSet), wire: "StatefulSet"},
		{name: "Job", v1: string(WorkloadJob), internal: string(config.WorkloadJob), wire: "Job"},
		{name: "Karpenter", v1: string(CapacityKarpenter), internal: string(config.CapacityKarpenter), wire: "Karpenter"},
		{name: "EKSManagedNodeGroup", v1: string(CapacityEKSManagedNodeGroup), internal: string(config.CapacityEKSManagedNodeGroup), wire: "EKSManagedNodeGroup"},
		{name: "GKE", v1: string(CapacityGKE), internal: string(config.CapacityGKE), wire: "GKE"},
		{name: "AKS", v1: string(CapacityAKS), internal: string(config.CapacityAKS), wire: "AKS"},
		{name: "Custom", v1: string(CapacityCustom), internal: string(config.CapacityCustom), wire: "Custom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wire, tc.v1); diff != "" {
				t.Errorf("v1 constant (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wire, tc.internal); diff != "" {
				t.Errorf("internal constant (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestDecodedActionsAreDefaulted decodes rules as users write them and
// defaults them: a Prefer rule without weight gets weight 1, a Require rule
// none, which holds only if the decoded words match the constants.
func TestDecodedActionsAreDefaulted(t *testing.T) {
	var got PlacementPolicyArgs
	if err := json.Unmarshal([]byte(`{"rules":[{"name":"r","action":"Require"},{"name":"p","action":"Prefer"}]}`), &got); err != nil {
		t.Fatal(err)
	}
	SetObjectDefaults_PlacementPolicyArgs(&got)
	want := PlacementPolicyArgs{
		Rules: []PlacementRule{
			{Name: "r", Action: "Require"},
			{Name: "p", Action: "Prefer", Weight: ptr.To[int32](1)},
		},
		IgnoreDaemonSetPods: ptr.To(true),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded and defaulted (-want, +got):\n%s", diff)
	}
}

// TestKubeSchedulerSchemeKnowsOurKinds guards the init that hooks
// AddToScheme into kube-scheduler's v1 SchemeBuilder: the scheduler builds
// its plugin-args scheme from that builder, so without the hook our kinds
// would reach the plugins undecoded and undefaulted (*runtime.Unknown).
func TestKubeSchedulerSchemeKnowsOurKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := schedv1.AddToScheme(scheme); err != nil {
		t.Fatalf("kube-scheduler v1 AddToScheme: %v", err)
	}
	for _, kind := range []string{"NodeLessPodsArgs", "PlacementPolicyArgs", "MaintenanceWindowArgs", "OnDemandShareArgs"} {
		if !scheme.Recognizes(SchemeGroupVersion.WithKind(kind)) {
			t.Errorf("kube-scheduler's v1 scheme does not know %s", kind)
		}
	}
	got := &NodeLessPodsArgs{}
	scheme.Default(got)
	want := &NodeLessPodsArgs{Mode: NodeLessPodsLeastPods, IgnoreDaemonSetPods: ptr.To(true), RelativeToCapacity: ptr.To(false)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaulted through kube-scheduler's scheme (-want, +got):\n%s", diff)
	}
}
