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

package playground

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/settle"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// karpenterGroups are the API groups of Karpenter's kinds (NodePool,
// NodeClaim, KWOKNodeClass...): a scenario holding one needs --karpenter,
// which installs their CRDs.
var karpenterGroups = []string{karpenter.NodePoolGVR.Group, karpenter.NodeClassGVR.Group}

// defaultNodePool is what a run with Karpenter gets when the scenario holds
// no NodePool: without one Karpenter adds nothing, and an operator trying
// --karpenter on a scenario of theirs (a snapshot, say) wants to see what
// it would add. On-demand nodes of any region, like the default pool of
// Karpenter's getting-started guide; never consolidated, so that the nodes
// reported at the end are the ones it added for the scenario.
func defaultNodePool() karpenter.NodePool {
	np := karpenter.CapacityTypeNodePool(karpenter.CapacityOnDemand)
	np.Name = "default"
	np.ConsolidateAfter = 0
	return np
}

// karpenterObjects returns "objects[i] (Kind name)" for each of the plan's
// objects of Karpenter's kinds, and whether one is a NodePool.
func karpenterObjects(plan *scenario.Plan) (found []string, nodePool bool) {
	for i, o := range plan.Objects {
		gvk := o.GroupVersionKind()
		if !slices.Contains(karpenterGroups, gvk.Group) {
			continue
		}
		found = append(found, fmt.Sprintf("objects[%d] (%s %s)", i, gvk.Kind, o.GetName()))
		if gvk.Group == karpenter.NodePoolGVR.Group && gvk.Kind == "NodePool" {
			nodePool = true
		}
	}
	return found, nodePool
}

// autoscaler is Karpenter on a run's control plane: what settle reads of
// it (settle.Autoscaler), and the nodes it added.
type autoscaler struct {
	k           *karpenter.Karpenter
	client      kubernetes.Interface
	defaultPool bool
}

// startKarpenter starts Karpenter on cp, with its CRDs, our instance types,
// the KWOKNodeClass its NodePools name (karpenter.DefaultNodeClass) and,
// when the plan holds no NodePool, defaultNodePool.
func startKarpenter(ctx context.Context, cp *localcluster.ControlPlane, assets, logDir string, plan *scenario.Plan, progress io.Writer) (*autoscaler, error) {
	fmt.Fprintf(progress, "starting Karpenter (%s, its KWOK provider) from %s\n", karpenter.Binary, assets)
	k, err := karpenter.Start(ctx, cp, assets, logDir)
	if err != nil {
		return nil, err
	}
	if err := k.CreateNodeClass(ctx); err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	a := &autoscaler{k: k, client: client}
	if _, hasPool := karpenterObjects(plan); !hasPool {
		np := defaultNodePool()
		if err := k.CreateNodePool(ctx, np); err != nil {
			return nil, err
		}
		a.defaultPool = true
		fmt.Fprintf(progress, "the scenario has no NodePool, without which Karpenter adds nothing: made NodePool %s (on-demand nodes of any region, never consolidated)\n", np.Name)
	}
	return a, nil
}

// Name names Karpenter in settle's progress lines.
func (a *autoscaler) Name() string { return "Karpenter" }

// Provisioning is Karpenter's NodeClaims now, and its provisioning passes.
func (a *autoscaler) Provisioning(ctx context.Context) (settle.Provisioning, error) {
	var p settle.Provisioning
	claims, err := a.k.Client.Resource(karpenter.NodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return p, fmt.Errorf("listing Karpenter's NodeClaims: %w", err)
	}
	for _, c := range claims.Items {
		if c.GetDeletionTimestamp() != nil {
			continue
		}
		p.Claims++
		if !conditionTrue(&c, "Ready") {
			p.Launching++
		}
	}
	if p.Passes, err = a.k.Metric(ctx, karpenter.ProvisioningPasses); err != nil {
		return p, err
	}
	return p, nil
}

// conditionTrue reports whether obj's status has condition typ True.
func conditionTrue(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if t, _, _ := unstructured.NestedString(m, "type"); t == typ {
			s, _, _ := unstructured.NestedString(m, "status")
			return s == string(corev1.ConditionTrue)
		}
	}
	return false
}

// result lists Karpenter's NodePools and the nodes it added (its
// NodePool's label), by name, with the pods of the scenario there.
func (a *autoscaler) result(ctx context.Context, pods []workload.OwnedPod) (*report.KarpenterResult, error) {
	r := &report.KarpenterResult{DefaultNodePool: a.defaultPool, NodePools: []string{}, Nodes: []report.AddedNode{}}
	pools, err := a.k.Client.Resource(karpenter.NodePoolGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Karpenter's NodePools: %w", err)
	}
	for _, p := range pools.Items {
		r.NodePools = append(r.NodePools, p.GetName())
	}
	slices.Sort(r.NodePools)
	nodes, err := a.addedNodes(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, report.AddedNode{
			Name:         n.Name,
			NodePool:     n.Labels[karpenter.NodePoolLabel],
			Region:       n.Labels[corev1.LabelTopologyRegion],
			Zone:         n.Labels[corev1.LabelTopologyZone],
			CapacityType: n.Labels[karpenter.CapacityTypeLabel],
			InstanceType: n.Labels[corev1.LabelInstanceTypeStable],
		})
	}
	report.CountAddedPods(r.Nodes, pods)
	for i := range nodes {
		r.Nodes[i].Node = report.NodeOf(&nodes[i], pods)
	}
	return r, nil
}

// addedNodes are the nodes of Karpenter's NodePools now, by name.
func (a *autoscaler) addedNodes(ctx context.Context) ([]corev1.Node, error) {
	list, err := a.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: karpenter.NodePoolLabel})
	if err != nil {
		return nil, fmt.Errorf("listing Karpenter's nodes: %w", err)
	}
	slices.SortFunc(list.Items, func(x, y corev1.Node) int { return strings.Compare(x.Name, y.Name) })
	return list.Items, nil
}

// nodeNames are the names of addedNodes.
func (a *autoscaler) nodeNames(ctx context.Context) ([]string, error) {
	nodes, err := a.addedNodes(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return names, nil
}
