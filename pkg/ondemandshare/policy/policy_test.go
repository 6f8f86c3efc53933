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

package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

func node(l map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: l}}
}

func TestCompileOrdersByNameAndSelects(t *testing.T) {
	args := &config.OnDemandShareArgs{
		ExcludedNamespaces: []string{"kube-system"},
		Policies: []config.OnDemandSharePolicy{
			{
				Name:               "web",
				NamespaceSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}},
				PodSelector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}},
				MinOnDemandPercent: 30,
				Capacity:           config.CapacityClasses{Preset: config.CapacityKarpenter},
			},
			{
				Name:             "batch",
				Namespaces:       []string{"batch"},
				MinOnDemandCount: 2,
				Capacity:         config.CapacityClasses{Preset: config.CapacityAKS},
			},
		},
	}
	ps, err := Compile(args)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{ps[0].Name, ps[1].Name}; !cmp.Equal(got, []string{"batch", "web"}) {
		t.Errorf("order = %v, want the first by name first", got)
	}
	batch, web := ps[0], ps[1]
	for _, tc := range []struct {
		p    *Policy
		ns   string
		nsL  labels.Set
		want bool
	}{
		{batch, "batch", nil, true},
		{batch, "other", nil, false},
		{web, "shop", labels.Set{"tier": "web"}, true},
		{web, "shop", labels.Set{"tier": "db"}, false},
		{web, "kube-system", labels.Set{"tier": "web"}, false},
	} {
		if got := tc.p.SelectsNamespace(tc.ns, tc.nsL); got != tc.want {
			t.Errorf("%s.SelectsNamespace(%s, %v) = %v, want %v", tc.p.Name, tc.ns, tc.nsL, got, tc.want)
		}
	}
	if !web.SelectsPodLabels(labels.Set{"app": "shop"}) || web.SelectsPodLabels(labels.Set{"app": "blog"}) {
		t.Error("web's podSelector does not select by app=shop")
	}
	if !batch.SelectsPodLabels(nil) {
		t.Error("a policy without podSelector must select every pod")
	}
	if got := web.Required(10); got != 3 {
		t.Errorf("web.Required(10) = %d, want 3", got)
	}
	if got := batch.Required(10); got != 2 {
		t.Errorf("batch.Required(10) = %d, want 2", got)
	}
	if web.SlotClass(1) != share.OnDemand || web.SlotClass(2) != share.Spot {
		t.Error("web's slot 1 must be on-demand and slot 2 spot")
	}
}

func TestNodeClass(t *testing.T) {
	custom := config.CapacityClasses{
		Preset:          config.CapacityCustom,
		OnDemand:        []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"reserved"}}},
		Spot:            []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"spot"}}},
		SpotTolerations: []v1.Toleration{{Key: "spot", Operator: v1.TolerationOpExists}},
	}
	tests := []struct {
		name     string
		capacity config.CapacityClasses
		labels   map[string]string
		want     share.Class
		ok       bool
	}{
		{"karpenter spot", config.CapacityClasses{Preset: config.CapacityKarpenter}, map[string]string{"karpenter.sh/capacity-type": "spot"}, share.Spot, true},
		{"karpenter on-demand", config.CapacityClasses{Preset: config.CapacityKarpenter}, map[string]string{"karpenter.sh/capacity-type": "on-demand"}, share.OnDemand, true},
		{"karpenter unlabelled node is neither", config.CapacityClasses{Preset: config.CapacityKarpenter}, nil, "", false},
		{"GKE unlabelled node is on-demand", config.CapacityClasses{Preset: config.CapacityGKE}, nil, share.OnDemand, true},
		{"GKE spot", config.CapacityClasses{Preset: config.CapacityGKE}, map[string]string{"cloud.google.com/gke-spot": "true"}, share.Spot, true},
		{"custom spot", custom, map[string]string{"pool": "spot"}, share.Spot, true},
		{"custom other pool", custom, map[string]string{"pool": "gpu"}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := Compile(&config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{
				{Name: "p", Namespaces: []string{"a"}, MinOnDemandCount: 1, Capacity: tc.capacity},
			}})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := ps[0].NodeClass(node(tc.labels))
			if got != tc.want || ok != tc.ok {
				t.Errorf("NodeClass = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRequirementsAreCopiesWithTolerations(t *testing.T) {
	ps, err := Compile(&config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{{
		Name: "p", Namespaces: []string{"a"}, MinOnDemandCount: 1,
		Capacity: config.CapacityClasses{Preset: config.CapacityAKS,
			SpotTolerations: []v1.Toleration{{Key: "extra", Operator: v1.TolerationOpExists}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	reqs, tols := ps[0].Requirements(share.Spot)
	wantTols := []v1.Toleration{
		{Key: "kubernetes.azure.com/scalesetpriority", Operator: v1.TolerationOpEqual, Value: "spot", Effect: v1.TaintEffectNoSchedule},
		{Key: "extra", Operator: v1.TolerationOpExists},
	}
	if diff := cmp.Diff(wantTols, tols); diff != "" {
		t.Errorf("spot tolerations (-want, +got):\n%s", diff)
	}
	reqs[0].Values[0] = "changed"
	tols[0].Key = "changed"
	again, tolsAgain := ps[0].Requirements(share.Spot)
	if again[0].Values[0] != "spot" || tolsAgain[0].Key == "changed" {
		t.Error("Requirements returned the policy's own slices: a caller's change leaked into the policy")
	}
	if _, onDemandTols := ps[0].Requirements(share.OnDemand); len(onDemandTols) != 0 {
		t.Errorf("on-demand pods gain tolerations %v, want none", onDemandTols)
	}
}

func TestCompileRefusesUnknownPreset(t *testing.T) {
	_, err := Compile(&config.OnDemandShareArgs{Policies: []config.OnDemandSharePolicy{{
		Name: "p", Namespaces: []string{"a"}, Capacity: config.CapacityClasses{Preset: "Azure"},
	}}})
	if err == nil {
		t.Fatal("Compile accepted an unknown preset")
	}
	want := `policies[0] ("p"): capacity: unknown capacity preset "Azure": must be one of ["Karpenter" "EKSManagedNodeGroup" "GKE" "AKS"]`
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}
