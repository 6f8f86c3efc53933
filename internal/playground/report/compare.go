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
	"text/tabwriter"
)

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
	for i, r := range runs {
		if err := writeKarpenterText(w, fmt.Sprintf("[%d] ", i+1), r.Result.Karpenter); err != nil {
			return err
		}
		if err := WriteShareText(w, fmt.Sprintf("[%d] ", i+1), r.Result.Share); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	header = "pod"
	for i := range runs {
		header += fmt.Sprintf("\t[%d] node", i+1)
	}
	fmt.Fprintln(tw, header)
	for _, row := range compareRows(runs) {
		line := row.label
		for _, p := range row.pods {
			switch {
			case p == nil:
				line += "\t-"
			case p.Node == "":
				line += "\t<none>"
			default:
				line += "\t" + p.Node
			}
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// compareRow is one line of the compared pods: pods[i] is run i's pod, nil
// when it has none there.
type compareRow struct {
	label string
	pods  []*PodResult
}

// compareRows lines up every pod of every run. Controllers name pods at
// random, so the k-th pod of an object in each run shares a row, labelled
// with the pod's name when the runs agree on the names of the object's pods,
// else "namespace/Kind/name #k". Objects come in the order they first
// appear, in the first run, then in the next ones (an object whose pods
// only one run made).
func compareRows(runs []Run) []compareRow {
	type group struct {
		namespace, object string
		pods              [][]*PodResult // per run
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, r := range runs {
		for j := range r.Result.Pods {
			p := &r.Result.Pods[j]
			key := p.Namespace + "\x00" + p.Object
			if p.Object == "" { // not from an object: the pod is its own
				key = p.Namespace + "\x01" + p.Name
			}
			g := byKey[key]
			if g == nil {
				g = &group{namespace: p.Namespace, object: p.Object, pods: make([][]*PodResult, len(runs))}
				byKey[key] = g
				groups = append(groups, g)
			}
			g.pods[i] = append(g.pods[i], p)
		}
	}
	var rows []compareRow
	for _, g := range groups {
		n := 0
		for _, ps := range g.pods {
			n = max(n, len(ps))
		}
		// Names when the runs that have the k-th pod agree on its name, for
		// every k; else the object and k, on every row of the object.
		first := len(rows)
		byName := true
		for k := range n {
			row := compareRow{pods: make([]*PodResult, len(runs))}
			for i, ps := range g.pods {
				if k >= len(ps) {
					continue
				}
				row.pods[i] = ps[k]
				if row.label == "" {
					row.label = g.namespace + "/" + ps[k].Name
				}
				byName = byName && g.namespace+"/"+ps[k].Name == row.label
			}
			rows = append(rows, row)
		}
		if !byName && g.object != "" {
			for k := range n {
				rows[first+k].label = fmt.Sprintf("%s/%s #%d", g.namespace, g.object, k+1)
			}
		}
	}
	return rows
}

// WriteCompareJSON writes {"runs": [...]}.
func WriteCompareJSON(w io.Writer, runs []Run) error {
	return writeJSON(w, struct {
		Runs []Run `json:"runs"`
	}{runs})
}
