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

package share

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

func TestPresetRequirements(t *testing.T) {
	in := func(key, value string) []v1.NodeSelectorRequirement {
		return []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}
	}
	absent := func(key string) []v1.NodeSelectorRequirement {
		return []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpDoesNotExist}}
	}
	aksToleration := []v1.Toleration{{Key: "kubernetes.azure.com/scalesetpriority", Operator: v1.TolerationOpEqual, Value: "spot", Effect: v1.TaintEffectNoSchedule}}
	tests := []struct {
		preset   Preset
		class    Class
		wantReqs []v1.NodeSelectorRequirement
		wantTols []v1.Toleration
	}{
		{Karpenter, OnDemand, in("karpenter.sh/capacity-type", "on-demand"), nil},
		{Karpenter, Spot, in("karpenter.sh/capacity-type", "spot"), nil},
		{EKSManagedNodeGroup, OnDemand, in("eks.amazonaws.com/capacityType", "ON_DEMAND"), nil},
		{EKSManagedNodeGroup, Spot, in("eks.amazonaws.com/capacityType", "SPOT"), nil},
		{GKE, OnDemand, absent("cloud.google.com/gke-spot"), nil},
		{GKE, Spot, in("cloud.google.com/gke-spot", "true"), nil},
		{AKS, OnDemand, absent("kubernetes.azure.com/scalesetpriority"), nil},
		{AKS, Spot, in("kubernetes.azure.com/scalesetpriority", "spot"), aksToleration},
	}
	for _, tc := range tests {
		t.Run(string(tc.preset)+"/"+string(tc.class), func(t *testing.T) {
			reqs, tols, err := tc.preset.Requirements(tc.class)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantReqs, reqs); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTols, tols); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPresetErrors(t *testing.T) {
	_, _, err := Preset("Custom").Requirements(OnDemand)
	if err == nil {
		t.Fatal("unknown preset: no error")
	}
	for _, p := range Presets {
		if !strings.Contains(err.Error(), string(p)) {
			t.Errorf("error %q does not name the allowed value %q", err, p)
		}
	}
	if _, _, err := Karpenter.Requirements("reserved"); err == nil {
		t.Error("unknown class: no error")
	}
}

// TestPresetClassesDisjoint evaluates each preset's requirements as the
// scheduler does against a node of each class and an unlabelled node: no
// node may satisfy both classes, and each class's node its own class.
func TestPresetClassesDisjoint(t *testing.T) {
	node := func(labels map[string]string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	}
	tests := []struct {
		preset             Preset
		onDemand, spot     map[string]string
		unlabelledOnDemand bool
	}{
		{preset: Karpenter, onDemand: map[string]string{"karpenter.sh/capacity-type": "on-demand"}, spot: map[string]string{"karpenter.sh/capacity-type": "spot"}},
		{preset: EKSManagedNodeGroup, onDemand: map[string]string{"eks.amazonaws.com/capacityType": "ON_DEMAND"}, spot: map[string]string{"eks.amazonaws.com/capacityType": "SPOT"}},
		{preset: GKE, onDemand: map[string]string{"cloud.google.com/gke-nodepool": "default"}, spot: map[string]string{"cloud.google.com/gke-spot": "true"}, unlabelledOnDemand: true},
		{preset: AKS, onDemand: map[string]string{"kubernetes.azure.com/agentpool": "system"}, spot: map[string]string{"kubernetes.azure.com/scalesetpriority": "spot"}, unlabelledOnDemand: true},
	}
	for _, tc := range tests {
		t.Run(string(tc.preset), func(t *testing.T) {
			match := func(c Class, n *v1.Node) bool {
				reqs, _, err := tc.preset.Requirements(c)
				if err != nil {
					t.Fatal(err)
				}
				sel, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}})
				if err != nil {
					t.Fatalf("%s: %v", c, err)
				}
				return sel.Match(n)
			}
			nodes := []struct {
				name         string
				node         *v1.Node
				wantOnDemand bool
				wantSpot     bool
			}{
				{name: "on-demand node", node: node(tc.onDemand), wantOnDemand: true},
				{name: "spot node", node: node(tc.spot), wantSpot: true},
				{name: "unlabelled node", node: node(nil), wantOnDemand: tc.unlabelledOnDemand},
			}
			for _, n := range nodes {
				od, sp := match(OnDemand, n.node), match(Spot, n.node)
				if od && sp {
					t.Errorf("%s matches both classes", n.name)
				}
				if od != n.wantOnDemand || sp != n.wantSpot {
					t.Errorf("%s: on-demand %v, spot %v; want %v, %v", n.name, od, sp, n.wantOnDemand, n.wantSpot)
				}
			}
		})
	}
}

// TestAKSSpotToleration checks the toleration against the taint AKS puts on
// spot nodes.
func TestAKSSpotToleration(t *testing.T) {
	_, tols, err := AKS.Requirements(Spot)
	if err != nil {
		t.Fatal(err)
	}
	taint := &v1.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: v1.TaintEffectNoSchedule}
	if len(tols) != 1 || !tols[0].ToleratesTaint(klog.Background(), taint, false) {
		t.Errorf("tolerations %v do not tolerate %v", tols, taint)
	}
}

// TestPresetFreshSlices guards callers that append to the result.
func TestPresetFreshSlices(t *testing.T) {
	a, _, _ := Karpenter.Requirements(Spot)
	a[0].Values[0] = "changed"
	b, _, _ := Karpenter.Requirements(Spot)
	if b[0].Values[0] != "spot" {
		t.Errorf("a caller's change leaked into the next call: %v", b)
	}
}
