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
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The resources of Karpenter's objects. The main module does not import
// Karpenter (its Kubernetes dependencies would move ours), so they are
// handled as unstructured objects.
var (
	NodePoolGVR  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	NodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	NodeClassGVR = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

// DefaultNodeClass is the name of the KWOKNodeClass CreateNodeClass makes
// and NodePools refer to.
const DefaultNodeClass = "default"

// Consolidation policies of a NodePool's disruption.
const (
	WhenEmpty                = "WhenEmpty"
	WhenEmptyOrUnderutilized = "WhenEmptyOrUnderutilized"
)

// NodePool is the part of a karpenter.sh/v1 NodePool that tests set.
type NodePool struct {
	Name string
	// Requirements every node of the pool meets, ANDed with each pod's
	// required node affinity when Karpenter picks an offering.
	Requirements []corev1.NodeSelectorRequirement
	// Labels of every node of the pool, besides Karpenter's.
	Labels map[string]string
	// ConsolidationPolicy is WhenEmpty or WhenEmptyOrUnderutilized.
	ConsolidationPolicy string
	// ConsolidateAfter is how long a node must see no pod arrive or leave
	// before Karpenter may consolidate it; 0 means never.
	ConsolidateAfter time.Duration
	// CPULimit caps the CPUs of the pool's nodes, in cores; 0 means none.
	CPULimit int64
	// Weight orders pools for Karpenter (higher first); 0 is unset.
	Weight int32
}

// RegionNodePool is a pool of region's nodes, spot or on-demand.
func RegionNodePool(region string) NodePool {
	return NodePool{
		Name: "region-" + region,
		Requirements: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelTopologyRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{region}},
			{Key: CapacityTypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{CapacityOnDemand, CapacitySpot}},
		},
		ConsolidationPolicy: WhenEmptyOrUnderutilized,
		ConsolidateAfter:    5 * time.Second,
	}
}

// CapacityTypeNodePool is a pool of nodes of one capacity type (spot or
// on-demand), in any region.
func CapacityTypeNodePool(capacityType string) NodePool {
	return NodePool{
		Name: capacityType,
		Requirements: []corev1.NodeSelectorRequirement{
			{Key: CapacityTypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{capacityType}},
		},
		ConsolidationPolicy: WhenEmptyOrUnderutilized,
		ConsolidateAfter:    5 * time.Second,
	}
}

// Validate says which field of np is wrong, and what is allowed.
func (np NodePool) Validate() error {
	if errs := validation.IsDNS1123Subdomain(np.Name); len(errs) > 0 {
		return fmt.Errorf("nodePool.name: %q is not a valid name: %v", np.Name, errs)
	}
	if np.ConsolidationPolicy != WhenEmpty && np.ConsolidationPolicy != WhenEmptyOrUnderutilized {
		return fmt.Errorf("nodePool %s: consolidationPolicy: must be %s or %s, got %q", np.Name, WhenEmpty, WhenEmptyOrUnderutilized, np.ConsolidationPolicy)
	}
	if np.ConsolidateAfter < 0 {
		return fmt.Errorf("nodePool %s: consolidateAfter: must be 0 (never) or positive, got %s", np.Name, np.ConsolidateAfter)
	}
	if np.CPULimit < 0 {
		return fmt.Errorf("nodePool %s: cpuLimit: must be 0 (none) or positive, got %d", np.Name, np.CPULimit)
	}
	if np.Weight < 0 || np.Weight > 100 {
		return fmt.Errorf("nodePool %s: weight: must be between 0 and 100, got %d", np.Name, np.Weight)
	}
	ops := []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}
	for i, r := range np.Requirements {
		if r.Key == "" {
			return fmt.Errorf("nodePool %s: requirements[%d].key: must be set", np.Name, i)
		}
		if !slices.Contains(ops, r.Operator) {
			return fmt.Errorf("nodePool %s: requirements[%d].operator: must be one of %v, got %q", np.Name, i, ops, r.Operator)
		}
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 0 {
			return fmt.Errorf("nodePool %s: requirements[%d].values: In needs at least one value", np.Name, i)
		}
	}
	return nil
}

// Object is np as a NodePool of DefaultNodeClass's nodes. Nodes never
// expire, and the disruption budget lets Karpenter remove every
// consolidatable node at once: tests wait for consolidation, not budgets.
func (np NodePool) Object() (*unstructured.Unstructured, error) {
	if err := np.Validate(); err != nil {
		return nil, err
	}
	requirements := make([]any, 0, len(np.Requirements))
	for _, r := range np.Requirements {
		req := map[string]any{"key": r.Key, "operator": string(r.Operator)}
		if len(r.Values) > 0 {
			values := make([]any, 0, len(r.Values))
			for _, v := range r.Values {
				values = append(values, v)
			}
			req["values"] = values
		}
		requirements = append(requirements, req)
	}
	consolidateAfter := "Never"
	if np.ConsolidateAfter > 0 {
		consolidateAfter = np.ConsolidateAfter.String()
	}
	template := map[string]any{
		"spec": map[string]any{
			"nodeClassRef": map[string]any{
				"group": NodeClassGVR.Group,
				"kind":  "KWOKNodeClass",
				"name":  DefaultNodeClass,
			},
			"requirements": requirements,
			"expireAfter":  "Never",
		},
	}
	if len(np.Labels) > 0 {
		labels := map[string]any{}
		for k, v := range np.Labels {
			labels[k] = v
		}
		template["metadata"] = map[string]any{"labels": labels}
	}
	spec := map[string]any{
		"template": template,
		"disruption": map[string]any{
			"consolidationPolicy": np.ConsolidationPolicy,
			"consolidateAfter":    consolidateAfter,
			"budgets":             []any{map[string]any{"nodes": "100%"}},
		},
	}
	if np.CPULimit > 0 {
		spec["limits"] = map[string]any{"cpu": fmt.Sprint(np.CPULimit)}
	}
	if np.Weight > 0 {
		spec["weight"] = int64(np.Weight)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": NodePoolGVR.GroupVersion().String(),
		"kind":       "NodePool",
		"metadata":   map[string]any{"name": np.Name},
		"spec":       spec,
	}}, nil
}

// CreateNodePool creates np.
func (k *Karpenter) CreateNodePool(ctx context.Context, np NodePool) error {
	obj, err := np.Object()
	if err != nil {
		return err
	}
	if _, err := k.Client.Resource(NodePoolGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating NodePool %s: %w", np.Name, err)
	}
	return nil
}

// CreateNodeClass creates the KWOKNodeClass DefaultNodeClass: nodes
// register at once (no nodeRegistrationDelay). Its CRD defaults its status
// to Ready, which Karpenter needs before it launches from it.
func (k *Karpenter) CreateNodeClass(ctx context.Context) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": NodeClassGVR.GroupVersion().String(),
		"kind":       "KWOKNodeClass",
		"metadata":   map[string]any{"name": DefaultNodeClass},
		"spec":       map[string]any{},
	}}
	if _, err := k.Client.Resource(NodeClassGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating KWOKNodeClass %s: %w", DefaultNodeClass, err)
	}
	return nil
}
