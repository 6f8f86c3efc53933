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
	"hash/fnv"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// palette is how many workload colours the stylesheet has (classes c0..).
const palette = 8

// barHeight is the height of a compact count bar for the fullest node.
const barHeight = 90

type groupView struct {
	Label string // the label value; "" for the ungrouped nodes
	Nodes []*nodeView
	Width int // compact: the number of bars
}

type nodeView struct {
	Name    string
	Pods    int
	Added   bool   // added by Karpenter
	Info    string // Karpenter's node pool, zone, capacity, instance type
	Extra   bool   // pods are bound there, but the scenario does not list it
	Blocks  []podView
	X, Y, H int // compact: the bar's place and height
	// CPU and Memory are nil when the node's allocatable is unknown.
	CPU, Memory *useView
	// Marks are what keeps pods off the node: taints, conditions, a
	// maintenance window.
	Marks []string
	// Kept are the rejections explained pods met on the node ("kept off
	// 3 pods: Plugin: reason"), at most keptLines; KeptMore counts the
	// other reasons, KeptPods the pods.
	Kept     []string
	KeptMore int
	KeptPods int
}

type podView struct {
	ID, Title, Name string
	Color           int
	Moved           bool
	Explain         string // id of the pod's explanation, "" for none
	Reason          string
	Marks           []podMark // the expectations that concerned the pod
	Broke           bool      // the pod broke one of them
}

func podID(run, i int) string     { return fmt.Sprintf("r%d-p%d", run+1, i) }
func explainID(run, i int) string { return fmt.Sprintf("r%d-x%d", run+1, i) }

// colour is a stable palette index for a workload, so its pods share a
// colour in every run and every report.
func colour(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % palette)
}

// cluster lays run's nodes out as columns (grouped by the groupBy label
// when the nodes have labels) with their pods, each with its expectation
// marks, and lists the pods that have no node. note says why the nodes
// are not grouped when asked to.
func cluster(run int, r report.Result, groupBy string, moved map[int]bool, marks map[int][]podMark, compact bool) (groups []groupView, unscheduled []podView, note string) {
	byName := map[string]*nodeView{}
	var scenario, added, extra []*nodeView
	for _, n := range r.Nodes {
		nv := &nodeView{Name: n.Name, Pods: n.Pods}
		facts(nv, n)
		byName[n.Name], scenario = nv, append(scenario, nv)
	}
	if r.Karpenter != nil {
		for _, n := range r.Karpenter.Nodes {
			nv := &nodeView{Name: n.Name, Pods: n.Pods, Added: true, Info: addedInfo(n)}
			facts(nv, n.Node)
			byName[n.Name], added = nv, append(added, nv)
		}
	}
	for i, p := range r.Pods {
		pv := podView{ID: podID(run, i), Title: p.Namespace + "/" + p.Name, Name: p.Name, Moved: moved[i], Reason: p.Reason, Marks: marks[i]}
		for _, m := range pv.Marks {
			pv.Broke = pv.Broke || m.Class == "fail"
		}
		key := p.Object
		if key == "" {
			key = pv.Title
		}
		pv.Color = colour(key)
		if p.Explain != nil {
			pv.Explain = explainID(run, i)
		}
		if p.Node == "" {
			unscheduled = append(unscheduled, pv)
			continue
		}
		nv := byName[p.Node]
		if nv == nil {
			nv = &nodeView{Name: p.Node, Extra: true}
			byName[p.Node], extra = nv, append(extra, nv)
		}
		if nv.Extra {
			nv.Pods++
		}
		if !compact {
			nv.Blocks = append(nv.Blocks, pv)
		}
	}
	k := keptOff(r)
	for name, nv := range byName {
		setKept(nv, k[name])
	}
	groups, note = group(r.Nodes, scenario, groupBy)
	if len(added) > 0 {
		groups = append(groups, groupView{Label: "added by Karpenter", Nodes: added})
	}
	if len(extra) > 0 {
		groups = append(groups, groupView{Label: "not in the scenario", Nodes: extra})
	}
	if compact {
		scale(groups)
	}
	return groups, unscheduled, note
}

// group splits the scenario's nodes by the value of their groupBy label,
// groups in the order their first node comes.
func group(nodes []report.NodeResult, views []*nodeView, groupBy string) ([]groupView, string) {
	if groupBy == "" {
		return []groupView{{Nodes: views}}, ""
	}
	var groups []groupView
	at := map[string]int{}
	labelled := false
	for i, n := range nodes {
		labels := nodeLabels(n)
		value, ok := labels[groupBy]
		labelled = labelled || labels != nil
		if !ok {
			value = "no " + groupBy
		}
		j, seen := at[value]
		if !seen {
			j, at[value] = len(groups), len(groups)
			groups = append(groups, groupView{Label: value})
		}
		groups[j].Nodes = append(groups[j].Nodes, views[i])
	}
	if !labelled {
		return []groupView{{Nodes: views}}, fmt.Sprintf("not grouped by %s: the result carries no node labels", groupBy)
	}
	return groups, ""
}

// scale sets each compact bar's place and height, the fullest node's bar
// barHeight high.
func scale(groups []groupView) {
	top := 1
	for _, g := range groups {
		for _, n := range g.Nodes {
			top = max(top, n.Pods)
		}
	}
	for gi := range groups {
		g := &groups[gi]
		g.Width = len(g.Nodes)
		for i, n := range g.Nodes {
			n.X, n.H = i, barLen(n.Pods, top, barHeight)
			n.Y = barHeight - n.H
		}
	}
}

// barLen is count scaled to full for largest, at least 1 for a non-zero
// count so that no pod disappears.
func barLen(count, largest, full int) int {
	if count <= 0 || largest <= 0 {
		return 0
	}
	return max(1, count*full/largest)
}

func addedInfo(n report.AddedNode) string {
	s := "node pool " + n.NodePool
	for _, v := range []string{n.Zone, n.CapacityType, n.InstanceType} {
		if v != "" {
			s += ", " + v
		}
	}
	return s
}

type reasonCount struct {
	Reason string
	Pods   int
}

// byReason counts the unscheduled pods per reason, reasons in the order
// their first pod comes: a compact run lists no pod one by one.
func byReason(pods []podView) []reasonCount {
	var out []reasonCount
	at := map[string]int{}
	for _, p := range pods {
		j, ok := at[p.Reason]
		if !ok {
			j, at[p.Reason] = len(out), len(out)
			out = append(out, reasonCount{Reason: p.Reason})
		}
		out[j].Pods++
	}
	return out
}
