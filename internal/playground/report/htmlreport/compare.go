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

package htmlreport

import (
	"fmt"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// maxMovedRows is how many moved pods the comparison table lists.
const maxMovedRows = 200

// movedRow is a pod placed differently across the runs: Nodes[i] is its
// node in run i ("" for none, "-" when run i has no such pod).
type movedRow struct {
	Pod   string
	Nodes []string
}

// match is one pod across runs: pods[i] is its index in run i's Pods, -1
// when run i has no such pod.
type match struct {
	pods []int
}

// matchPods pairs the pods of the runs. A controller names its pods at
// random, so two runs of one scenario seldom share pod names: a pod of an
// object is matched by its object and its rank among that object's pods
// (Result.Pods is sorted by object, then name), a pod of no object by its
// namespace and name. Matches come in the order first seen.
func matchPods(runs []report.Run) []*match {
	var out []*match
	byKey := map[string]*match{}
	for ri, r := range runs {
		rank := map[string]int{}
		for pi, p := range r.Result.Pods {
			key := p.Namespace + "\x01" + p.Name
			if p.Object != "" {
				okey := p.Namespace + "\x00" + p.Object
				key = fmt.Sprintf("%s\x00%d", okey, rank[okey])
				rank[okey]++
			}
			m := byKey[key]
			if m == nil {
				m = &match{pods: make([]int, len(runs))}
				for i := range m.pods {
					m.pods[i] = -1
				}
				byKey[key] = m
				out = append(out, m)
			}
			m.pods[ri] = pi
		}
	}
	return out
}

// moved says, for two or more runs, whether two runs that both have the
// pod put it on different nodes (none counts as a node).
func (m *match) moved(runs []report.Run) bool {
	node, seen := "", false
	for ri, pi := range m.pods {
		if pi < 0 {
			continue
		}
		n := runs[ri].Result.Pods[pi].Node
		if seen && n != node {
			return true
		}
		node, seen = n, true
	}
	return false
}

// movedPods are, per run, the indexes of its pods placed differently in
// another run; nil maps for a single run.
func movedPods(runs []report.Run) []map[int]bool {
	out := make([]map[int]bool, len(runs))
	if len(runs) < 2 {
		return out
	}
	for i := range out {
		out[i] = map[int]bool{}
	}
	for _, m := range matchPods(runs) {
		if !m.moved(runs) {
			continue
		}
		for ri, pi := range m.pods {
			if pi >= 0 {
				out[ri][pi] = true
			}
		}
	}
	return out
}

// movedTable lists the moved pods, at most maxMovedRows of them, and how
// many more there are.
func movedTable(runs []report.Run) ([]movedRow, int) {
	if len(runs) < 2 {
		return nil, 0
	}
	var rows []movedRow
	more := 0
	for _, m := range matchPods(runs) {
		if !m.moved(runs) {
			continue
		}
		if len(rows) == maxMovedRows {
			more++
			continue
		}
		rows = append(rows, m.row(runs))
	}
	return rows, more
}

// row labels the pod by its name where every run that has it agrees on
// the name, else by its object and rank.
func (m *match) row(runs []report.Run) movedRow {
	row := movedRow{Nodes: make([]string, len(runs))}
	var label, object string
	rank, same := 0, true
	for ri, pi := range m.pods {
		if pi < 0 {
			row.Nodes[ri] = "-"
			continue
		}
		p := runs[ri].Result.Pods[pi]
		name := p.Namespace + "/" + p.Name
		if label == "" {
			label, object = name, p.Namespace+"/"+p.Object
			rank = rankOf(runs[ri].Result.Pods, pi)
		}
		same = same && name == label
		row.Nodes[ri] = p.Node
	}
	row.Pod = label
	if !same {
		row.Pod = fmt.Sprintf("%s #%d", object, rank+1)
	}
	return row
}

// rankOf is the rank of pods[i] among the pods of its object.
func rankOf(pods []report.PodResult, i int) int {
	k := 0
	for j := range i {
		if pods[j].Namespace == pods[i].Namespace && pods[j].Object == pods[i].Object {
			k++
		}
	}
	return k
}
