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
	"encoding/json"
	"fmt"
	"io"
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
	top := largest(r.Nodes)
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "  %s\t%s %d\n", n.Name, bar(n.Pods, top), n.Pods)
	}
	if err := tw.Flush(); err != nil {
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

// WriteCompareText writes runs side by side: a column per run with each
// node's count and each pod's node. Every run must come from the same
// scenario.
func WriteCompareText(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "node"
	for i, r := range runs {
		header += fmt.Sprintf("\t[%d] %s", i+1, r.Config)
	}
	fmt.Fprintln(tw, header)
	tops := make([]int, len(runs))
	for i, r := range runs {
		tops[i] = largest(r.Result.Nodes)
	}
	for j, n := range runs[0].Result.Nodes {
		line := n.Name
		for i, r := range runs {
			c := r.Result.Nodes[j].Pods
			line += fmt.Sprintf("\t%s %d", bar(c, tops[i]), c)
		}
		fmt.Fprintln(tw, line)
	}
	line := "spread"
	for _, r := range runs {
		line += fmt.Sprintf("\t%d", r.Result.Spread)
	}
	fmt.Fprintln(tw, line)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	header = "pod"
	for i := range runs {
		header += fmt.Sprintf("\t[%d] node", i+1)
	}
	fmt.Fprintln(tw, header)
	seen := map[string]int{}
	for j, p := range runs[0].Result.Pods {
		line := p.Namespace + "/" + p.Name
		seen[p.Object]++
		for _, r := range runs[1:] {
			// Controllers name pods at random: the rows are then the
			// object's first, second, ... pod in each run.
			if j >= len(r.Result.Pods) || r.Result.Pods[j].Name != p.Name {
				line = fmt.Sprintf("%s/%s #%d", p.Namespace, p.Object, seen[p.Object])
			}
		}
		for _, r := range runs {
			if j >= len(r.Result.Pods) {
				line += "\t-"
				continue
			}
			node := r.Result.Pods[j].Node
			if node == "" {
				node = "<none>"
			}
			line += "\t" + node
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// WriteCompareJSON writes {"runs": [...]}.
func WriteCompareJSON(w io.Writer, runs []Run) error {
	return writeJSON(w, struct {
		Runs []Run `json:"runs"`
	}{runs})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
