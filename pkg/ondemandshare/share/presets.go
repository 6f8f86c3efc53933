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
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Preset names a platform whose node labels tell spot from on-demand.
type Preset string

const (
	// Karpenter labels every node it launches with karpenter.sh/capacity-type.
	Karpenter Preset = "Karpenter"
	// EKSManagedNodeGroup is an EKS managed node group's capacityType label.
	EKSManagedNodeGroup Preset = "EKSManagedNodeGroup"
	// GKE labels only spot nodes, with cloud.google.com/gke-spot=true.
	GKE Preset = "GKE"
	// AKS labels and taints only spot nodes, with
	// kubernetes.azure.com/scalesetpriority=spot.
	AKS Preset = "AKS"
)

// Presets lists the known presets in the order error messages name them.
var Presets = []Preset{Karpenter, EKSManagedNodeGroup, GKE, AKS}

const (
	karpenterCapacityType = "karpenter.sh/capacity-type"
	eksCapacityType       = "eks.amazonaws.com/capacityType"
	gkeSpot               = "cloud.google.com/gke-spot"
	aksPriority           = "kubernetes.azure.com/scalesetpriority"
)

// Requirements returns what a pod of class c must require of its node under
// preset p, and the tolerations it needs there. On GKE and AKS on-demand nodes
// carry no label, so on-demand is "label absent" (DoesNotExist), which only
// node affinity can say, not nodeSelector. AKS taints its spot nodes, so the
// spot class adds the matching toleration. GKE's node auto-provisioning and
// Autopilot taint spot nodes too, but Standard pools do not; a policy that
// needs that toleration states it itself.
//
// Each call returns new slices, which the caller may change.
func (p Preset) Requirements(c Class) ([]v1.NodeSelectorRequirement, []v1.Toleration, error) {
	if c != OnDemand && c != Spot {
		return nil, nil, fmt.Errorf("unknown capacity class %q: must be %q or %q", c, OnDemand, Spot)
	}
	in := func(key, value string) []v1.NodeSelectorRequirement {
		return []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}
	}
	absent := func(key string) []v1.NodeSelectorRequirement {
		return []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpDoesNotExist}}
	}
	spot := c == Spot
	switch p {
	case Karpenter:
		if spot {
			return in(karpenterCapacityType, "spot"), nil, nil
		}
		return in(karpenterCapacityType, "on-demand"), nil, nil
	case EKSManagedNodeGroup:
		if spot {
			return in(eksCapacityType, "SPOT"), nil, nil
		}
		return in(eksCapacityType, "ON_DEMAND"), nil, nil
	case GKE:
		if spot {
			return in(gkeSpot, "true"), nil, nil
		}
		return absent(gkeSpot), nil, nil
	case AKS:
		if spot {
			return in(aksPriority, "spot"), []v1.Toleration{{
				Key:      aksPriority,
				Operator: v1.TolerationOpEqual,
				Value:    "spot",
				Effect:   v1.TaintEffectNoSchedule,
			}}, nil
		}
		return absent(aksPriority), nil, nil
	}
	return nil, nil, fmt.Errorf("unknown capacity preset %q: must be one of %q", p, Presets)
}
