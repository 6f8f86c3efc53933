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

package karpenter

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// offering is one line of the instance-types file, flattened.
type offering struct {
	Type, Region, Zone, CapacityType string
}

func TestInstanceTypesJSON(t *testing.T) {
	data, err := InstanceTypesJSON(InstanceTypes, Regions)
	if err != nil {
		t.Fatal(err)
	}
	// Decoded into the provider's field names, which its loader
	// (encoding/json into InstanceTypeOptions) matches.
	var types []struct {
		Name      string `json:"name"`
		Offerings []struct {
			Price        float64
			Available    bool
			Requirements []corev1.NodeSelectorRequirement
		} `json:"offerings"`
		Architecture     string              `json:"architecture"`
		OperatingSystems []string            `json:"operatingSystems"`
		Resources        corev1.ResourceList `json:"resources"`
	}
	if err := json.Unmarshal(data, &types); err != nil {
		t.Fatal(err)
	}
	var got, want []offering
	prices := map[offering]float64{}
	for _, it := range InstanceTypes {
		for _, r := range Regions {
			for _, z := range r.Zones {
				for _, ct := range []string{CapacityOnDemand, CapacitySpot} {
					want = append(want, offering{it.Name, r.Name, z, ct})
				}
			}
		}
	}
	for _, it := range types {
		if it.Architecture != "amd64" || len(it.OperatingSystems) != 1 || it.OperatingSystems[0] != "linux" {
			t.Errorf("%s: architecture %q, operating systems %v; want amd64, [linux]", it.Name, it.Architecture, it.OperatingSystems)
		}
		if it.Resources.Cpu().IsZero() || it.Resources.Memory().IsZero() || it.Resources.Pods().Value() != 110 {
			t.Errorf("%s: resources %v, want cpu, memory and 110 pods", it.Name, it.Resources)
		}
		for _, o := range it.Offerings {
			line := offering{Type: it.Name}
			for _, r := range o.Requirements {
				if r.Operator != corev1.NodeSelectorOpIn || len(r.Values) != 1 {
					t.Errorf("%s: requirement %v: want one value In (the provider labels nodes only with those)", it.Name, r)
					continue
				}
				switch r.Key {
				case corev1.LabelTopologyRegion:
					line.Region = r.Values[0]
				case corev1.LabelTopologyZone:
					line.Zone = r.Values[0]
				case CapacityTypeLabel:
					line.CapacityType = r.Values[0]
				default:
					t.Errorf("%s: unexpected requirement %v", it.Name, r)
				}
			}
			if !o.Available {
				t.Errorf("%v: not available", line)
			}
			prices[line] = o.Price
			got = append(got, line)
		}
	}
	sortOfferings := func(o []offering) {
		sort.Slice(o, func(i, j int) bool {
			a, b := o[i], o[j]
			return a.Type+a.Region+a.Zone+a.CapacityType < b.Type+b.Region+b.Zone+b.CapacityType
		})
	}
	sortOfferings(got)
	sortOfferings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offerings (-want +got):\n%s", diff)
	}
	// What the tests rely on: spot is cheaper than on-demand, and
	// us-east-1 cheaper than eu-west-1, for the same machine.
	for _, it := range InstanceTypes {
		eu := prices[offering{it.Name, "eu-west-1", "eu-west-1a", CapacityOnDemand}]
		euSpot := prices[offering{it.Name, "eu-west-1", "eu-west-1a", CapacitySpot}]
		us := prices[offering{it.Name, "us-east-1", "us-east-1a", CapacityOnDemand}]
		if !(euSpot < eu) || !(us < eu) || math.Abs(us-it.Price) > 1e-9 {
			t.Errorf("%s: prices eu on-demand %v, eu spot %v, us on-demand %v: want spot < on-demand, us < eu, us on-demand = %v",
				it.Name, eu, euSpot, us, it.Price)
		}
	}
}

func TestInstanceTypesJSONErrors(t *testing.T) {
	good := InstanceType{Name: "c-2x", CPU: "2", Memory: "4Gi", Price: 0.1}
	region := Region{Name: "r", Zones: []string{"r-a"}, PriceFactor: 1}
	for _, tt := range []struct {
		name    string
		types   []InstanceType
		regions []Region
		want    string
	}{
		{"no types", nil, []Region{region}, "instance types: none given"},
		{"no regions", []InstanceType{good}, nil, "regions: none given"},
		{"region without zones", []InstanceType{good}, []Region{{Name: "r", PriceFactor: 1}}, "regions[0]: a region needs a name and at least one zone"},
		{"zero price factor", []InstanceType{good}, []Region{{Name: "r", Zones: []string{"a"}}}, "regions[0].priceFactor: must be a positive number, got 0"},
		{"NaN price factor", []InstanceType{good}, []Region{{Name: "r", Zones: []string{"a"}, PriceFactor: math.NaN()}}, "regions[0].priceFactor: must be a positive number, got NaN"},
		{"duplicate name", []InstanceType{good, good}, []Region{region}, `instanceTypes[1].name: must be set and unique, got "c-2x"`},
		{"bad cpu", []InstanceType{{Name: "x", CPU: "two", Memory: "1Gi", Price: 1}}, []Region{region}, `instanceTypes[0].cpu: must be a positive quantity, got "two"`},
		{"zero memory", []InstanceType{{Name: "x", CPU: "1", Memory: "0", Price: 1}}, []Region{region}, `instanceTypes[0].memory: must be a positive quantity, got "0"`},
		{"negative price", []InstanceType{{Name: "x", CPU: "1", Memory: "1Gi", Price: -1}}, []Region{region}, "instanceTypes[0].price: must be a positive number, got -1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := InstanceTypesJSON(tt.types, tt.regions)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want one starting with %q", err, tt.want)
			}
		})
	}
}

func TestNodePoolObject(t *testing.T) {
	np := RegionNodePool("eu-west-1")
	np.Labels = map[string]string{"team": "payments"}
	np.CPULimit = 16
	np.Weight = 10
	obj, err := np.Object()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "karpenter.sh/v1",
		"kind":       "NodePool",
		"metadata":   map[string]any{"name": "region-eu-west-1"},
		"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": "payments"}},
				"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
					"requirements": []any{
						map[string]any{"key": "topology.kubernetes.io/region", "operator": "In", "values": []any{"eu-west-1"}},
						map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand", "spot"}},
					},
					"expireAfter": "Never",
				},
			},
			"disruption": map[string]any{
				"consolidationPolicy": "WhenEmptyOrUnderutilized",
				"consolidateAfter":    "5s",
				"budgets":             []any{map[string]any{"nodes": "100%"}},
			},
			"limits": map[string]any{"cpu": "16"},
			"weight": int64(10),
		},
	}
	if diff := cmp.Diff(want, obj.Object); diff != "" {
		t.Errorf("NodePool (-want +got):\n%s", diff)
	}

	never := CapacityTypeNodePool(CapacitySpot)
	never.ConsolidationPolicy, never.ConsolidateAfter = WhenEmpty, 0
	obj, err = never.Object()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := obj.Object["spec"].(map[string]any)
	if diff := cmp.Diff(map[string]any{
		"consolidationPolicy": "WhenEmpty",
		"consolidateAfter":    "Never",
		"budgets":             []any{map[string]any{"nodes": "100%"}},
	}, spec["disruption"]); diff != "" {
		t.Errorf("disruption of a pool that never consolidates (-want +got):\n%s", diff)
	}
	if _, ok := spec["limits"]; ok {
		t.Errorf("limits set with CPULimit 0: %v", spec["limits"])
	}
}

func TestNodePoolValidate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*NodePool)
		want   string
	}{
		{"valid", func(*NodePool) {}, ""},
		{"bad name", func(np *NodePool) { np.Name = "EU West" }, `nodePool.name: "EU West" is not a valid name`},
		{"unknown policy", func(np *NodePool) { np.ConsolidationPolicy = "Always" },
			`nodePool spot: consolidationPolicy: must be WhenEmpty or WhenEmptyOrUnderutilized, got "Always"`},
		{"negative consolidateAfter", func(np *NodePool) { np.ConsolidateAfter = -time.Second },
			"nodePool spot: consolidateAfter: must be 0 (never) or positive, got -1s"},
		{"negative limit", func(np *NodePool) { np.CPULimit = -1 }, "nodePool spot: cpuLimit: must be 0 (none) or positive, got -1"},
		{"weight too high", func(np *NodePool) { np.Weight = 101 }, "nodePool spot: weight: must be between 0 and 100, got 101"},
		{"requirement without key", func(np *NodePool) { np.Requirements[0].Key = "" }, "nodePool spot: requirements[0].key: must be set"},
		{"unknown operator", func(np *NodePool) { np.Requirements[0].Operator = "Like" }, `nodePool spot: requirements[0].operator: must be one of [In NotIn Exists DoesNotExist Gt Lt], got "Like"`},
		{"In without values", func(np *NodePool) { np.Requirements[0].Values = nil }, "nodePool spot: requirements[0].values: In needs at least one value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			np := CapacityTypeNodePool(CapacitySpot)
			tt.change(&np)
			err := np.Validate()
			if tt.want == "" {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want one starting with %q", err, tt.want)
			}
			if _, objErr := np.Object(); objErr == nil {
				t.Errorf("Object() made an object of an invalid NodePool")
			}
		})
	}
}

func TestCheckAssets(t *testing.T) {
	dir := t.TempDir()
	err := CheckAssets(dir)
	if err == nil || !strings.Contains(err.Error(), "make karpenter") || !strings.Contains(err.Error(), filepath.Join(dir, Binary)) {
		t.Fatalf("error %v, want one naming %s and `make karpenter`", err, filepath.Join(dir, Binary))
	}
	if err := os.WriteFile(filepath.Join(dir, Binary), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, CRDDir), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, crd := range CRDs[:len(CRDs)-1] {
		if err := os.WriteFile(filepath.Join(dir, CRDDir, crd), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	last := filepath.Join(dir, CRDDir, CRDs[len(CRDs)-1])
	if err := CheckAssets(dir); err == nil || !strings.Contains(err.Error(), last) || strings.Contains(err.Error(), filepath.Join(dir, Binary)+",") {
		t.Fatalf("error %v, want one naming only %s", err, last)
	}
	if err := os.WriteFile(last, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckAssets(dir); err != nil {
		t.Fatalf("every asset present: %v", err)
	}
}

func TestMetricValue(t *testing.T) {
	text := `# HELP karpenter_scheduler_scheduling_duration_seconds Duration of scheduling simulations.
# TYPE karpenter_scheduler_scheduling_duration_seconds histogram
karpenter_scheduler_scheduling_duration_seconds_bucket{controller="provisioner",le="+Inf"} 7
karpenter_scheduler_scheduling_duration_seconds_count{controller="disruption"} 3
karpenter_scheduler_scheduling_duration_seconds_count{controller="provisioner"} 7
karpenter_nodes_created_total{nodepool="a"} 2 1700000000000
karpenter_broken{x="y"} many
karpenter_empty{x="y"} 
`
	for _, tt := range []struct {
		series  string
		want    float64
		wantErr string
	}{
		{series: ProvisioningPasses, want: 7},
		{series: `karpenter_scheduler_scheduling_duration_seconds_count{controller="disruption"}`, want: 3},
		{series: `karpenter_nodes_created_total{nodepool="a"}`, want: 2},
		{series: `karpenter_nodes_created_total{nodepool="b"}`, want: 0},
		{series: `karpenter_broken{x="y"}`, wantErr: `metric karpenter_broken{x="y"}: "many" is not a number`},
		{series: `karpenter_empty{x="y"}`, wantErr: `metric karpenter_empty{x="y"}: no value`},
	} {
		t.Run(tt.series, func(t *testing.T) {
			got, err := metricValue(text, tt.series)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
