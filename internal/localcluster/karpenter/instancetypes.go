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
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Well-known keys of Karpenter's nodes.
const (
	CapacityTypeLabel = "karpenter.sh/capacity-type"
	NodePoolLabel     = "karpenter.sh/nodepool"
	CapacitySpot      = "spot"
	CapacityOnDemand  = "on-demand"
)

// Region is a region of our simulated cloud and its zones.
type Region struct {
	Name  string
	Zones []string
	// PriceFactor multiplies an instance type's price in this region.
	PriceFactor float64
}

// InstanceType is one machine size of our simulated cloud, offered in every
// zone of every region, spot and on-demand.
type InstanceType struct {
	// Name follows the KWOK provider's "<family>-<size>": Karpenter derives
	// the karpenter.kwok.sh/instance-family label from what precedes the
	// first dash.
	Name   string
	CPU    string
	Memory string
	// Price is the on-demand price per hour in a region of PriceFactor 1.
	Price float64
}

// spotFactor is the price of spot capacity against on-demand.
const spotFactor = 0.7

// Regions are two regions, so that a residency rule has somewhere to say
// no: us-east-1 is the cheaper, so a pod that does not require eu-west-1
// gets a US node (Karpenter launches the cheapest offering that fits).
var Regions = []Region{
	{Name: "eu-west-1", Zones: []string{"eu-west-1a", "eu-west-1b"}, PriceFactor: 1.2},
	{Name: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}, PriceFactor: 1},
}

// InstanceTypes are a handful of small machines, so that tests fill a node
// with a few pods and Karpenter's simulation stays quick.
var InstanceTypes = []InstanceType{
	{Name: "c-2x", CPU: "2", Memory: "4Gi", Price: 0.068},
	{Name: "c-4x", CPU: "4", Memory: "8Gi", Price: 0.136},
	{Name: "m-2x", CPU: "2", Memory: "8Gi", Price: 0.077},
	{Name: "m-4x", CPU: "4", Memory: "16Gi", Price: 0.154},
	{Name: "m-8x", CPU: "8", Memory: "32Gi", Price: 0.308},
}

// kwokInstanceType is the KWOK provider's instance-types file format
// (InstanceTypeOptions in sigs.k8s.io/karpenter/kwok/cloudprovider); its
// offerings' fields carry no JSON tags there, hence the capitals.
type kwokInstanceType struct {
	Name             string              `json:"name"`
	Offerings        []kwokOffering      `json:"offerings"`
	Architecture     string              `json:"architecture"`
	OperatingSystems []corev1.OSName     `json:"operatingSystems"`
	Resources        corev1.ResourceList `json:"resources"`
}

type kwokOffering struct {
	Price        float64                          `json:"Price"`
	Available    bool                             `json:"Available"`
	Requirements []corev1.NodeSelectorRequirement `json:"Requirements"`
}

// InstanceTypesJSON renders types in regions as the KWOK provider's
// instance-types file: one offering per zone and capacity type, each
// requiring its region, zone and capacity type (which become the labels of
// the nodes launched from it), priced Price x PriceFactor, x 0.7 for spot.
func InstanceTypesJSON(types []InstanceType, regions []Region) ([]byte, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("instance types: none given")
	}
	if len(regions) == 0 {
		return nil, fmt.Errorf("regions: none given")
	}
	for i, r := range regions {
		if r.Name == "" || len(r.Zones) == 0 {
			return nil, fmt.Errorf("regions[%d]: a region needs a name and at least one zone, got name %q and zones %v", i, r.Name, r.Zones)
		}
		if !(r.PriceFactor > 0) || math.IsInf(r.PriceFactor, 0) {
			return nil, fmt.Errorf("regions[%d].priceFactor: must be a positive number, got %v", i, r.PriceFactor)
		}
	}
	var out []kwokInstanceType
	names := map[string]bool{}
	for i, t := range types {
		if t.Name == "" || names[t.Name] {
			return nil, fmt.Errorf("instanceTypes[%d].name: must be set and unique, got %q", i, t.Name)
		}
		names[t.Name] = true
		cpu, err := resource.ParseQuantity(t.CPU)
		if err != nil || cpu.Sign() <= 0 {
			return nil, fmt.Errorf("instanceTypes[%d].cpu: must be a positive quantity, got %q", i, t.CPU)
		}
		memory, err := resource.ParseQuantity(t.Memory)
		if err != nil || memory.Sign() <= 0 {
			return nil, fmt.Errorf("instanceTypes[%d].memory: must be a positive quantity, got %q", i, t.Memory)
		}
		if !(t.Price > 0) || math.IsInf(t.Price, 0) {
			return nil, fmt.Errorf("instanceTypes[%d].price: must be a positive number, got %v", i, t.Price)
		}
		it := kwokInstanceType{
			Name:             t.Name,
			Architecture:     "amd64",
			OperatingSystems: []corev1.OSName{corev1.Linux},
			Resources: corev1.ResourceList{
				corev1.ResourceCPU:    cpu,
				corev1.ResourceMemory: memory,
				corev1.ResourcePods:   resource.MustParse("110"),
			},
		}
		for _, r := range regions {
			for _, zone := range r.Zones {
				for _, ct := range []string{CapacityOnDemand, CapacitySpot} {
					price := t.Price * r.PriceFactor
					if ct == CapacitySpot {
						price *= spotFactor
					}
					it.Offerings = append(it.Offerings, kwokOffering{
						Price:     price,
						Available: true,
						Requirements: []corev1.NodeSelectorRequirement{
							{Key: CapacityTypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{ct}},
							{Key: corev1.LabelTopologyRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{r.Name}},
							{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}},
						},
					})
				}
			}
		}
		out = append(out, it)
	}
	return json.MarshalIndent(out, "", "  ")
}
