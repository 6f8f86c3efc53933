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
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// maxBar is the widest bar WriteText draws; larger counts are scaled.
const maxBar = 40

// Run is one scenario run with a scheduler config.
type Run struct {
	Config string `json:"config"`
	Result Result `json:"result"`
}

// bar is count as a bar of at most maxBar blocks, scaled to largest.
func bar(count, largest int) string {
	n := count
	if largest > maxBar {
		n = (count*maxBar + largest - 1) / largest
	}
	return strings.Repeat("█", n)
}

func largest(nodes []NodeResult) int {
	m := 0
	for _, n := range nodes {
		m = max(m, n.Pods)
	}
	return m
}

// WriteText writes r for a terminal: a bar per node, a line per pod, the
// spread.
func WriteText(w io.Writer, r Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pods per node:")
	nodes := r.Nodes
	if r.Karpenter != nil {
		nodes = append(slices.Clip(nodes), addedNodeResults(r.Karpenter.Nodes)...)
	}
	top := largest(nodes)
	for _, n := range nodes {
		fmt.Fprintf(tw, "  %s\t%s %d\n", n.Name, bar(n.Pods, top), n.Pods)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeKarpenterText(w, "", r.Karpenter); err != nil {
		return err
	}
	if err := WriteShareText(w, "", r.Share); err != nil {
		return err
	}
	fmt.Fprintln(tw, "pods:")
	for _, p := range r.Pods {
		node := p.Node
		if node == "" {
			node = "<none>: " + p.Reason
		}
		fmt.Fprintf(tw, "  %s/%s\t-> %s\n", p.Namespace, p.Name, node)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "spread (max-min pods per node): %d\n", r.Spread)
	return err
}

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r Result) error {
	return writeJSON(w, r)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
