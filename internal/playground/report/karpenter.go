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

package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// KarpenterResult is what Karpenter did in a run with --karpenter.
type KarpenterResult struct {
	// NodePools are the NodePools at the end, by name.
	NodePools []string `json:"nodePools"`
	// DefaultNodePool says the playground made NodePools[0] because the
	// scenario holds none.
	DefaultNodePool bool `json:"defaultNodePool,omitempty"`
	// Nodes are the nodes of Karpenter's NodeClaims at the end, by name.
	// Nodes it added and removed during the run are not listed.
	Nodes []AddedNode `json:"nodes"`
}

// AddedNode is a node Karpenter added, from its labels.
type AddedNode struct {
	Name         string `json:"name"`
	NodePool     string `json:"nodePool"`
	Region       string `json:"region,omitempty"`
	Zone         string `json:"zone,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	InstanceType string `json:"instanceType,omitempty"`
	// Pods is the number of the scenario's pods bound there.
	Pods int `json:"pods"`
	// Node is the node's facts for the HTML report (see NodeOf).
	Node NodeResult `json:"-"`
}

// CountAddedPods sets each added node's Pods from the pods.
func CountAddedPods(nodes []AddedNode, pods []workload.OwnedPod) {
	counts := map[string]int{}
	for _, op := range pods {
		if workload.Bound(op.Pod) {
			counts[op.Pod.Spec.NodeName]++
		}
	}
	for i := range nodes {
		nodes[i].Pods = counts[nodes[i].Name]
	}
}

// writeKarpenterText writes the nodes Karpenter added, or says it added
// none; nothing when k is nil (a run without Karpenter). prefix starts
// the heading ("[2] " in a comparison).
func writeKarpenterText(w io.Writer, prefix string, k *KarpenterResult) error {
	if k == nil {
		return nil
	}
	pools := strings.Join(k.NodePools, ", ")
	if pools == "" {
		pools = "none"
	}
	if k.DefaultNodePool {
		pools += " (made by the playground: the scenario has no NodePool)"
	}
	if len(k.Nodes) == 0 {
		_, err := fmt.Fprintf(w, "%snodes Karpenter added: none (NodePools: %s)\n", prefix, pools)
		return err
	}
	fmt.Fprintf(w, "%snodes Karpenter added (NodePools: %s):\n", prefix, pools)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  node\tnodepool\tregion\tcapacity\tinstance type\tpods")
	for _, n := range k.Nodes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\n", n.Name, orDash(n.NodePool), orDash(n.Region), orDash(n.CapacityType), orDash(n.InstanceType), n.Pods)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// addedNodeResults are the added nodes as WriteText's bars show them.
func addedNodeResults(nodes []AddedNode) []NodeResult {
	out := make([]NodeResult, 0, len(nodes))
	for _, n := range nodes {
		r := n.Node
		r.Name, r.Pods = n.Name, n.Pods
		out = append(out, r)
	}
	return out
}
