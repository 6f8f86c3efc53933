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

// Package reporttest makes playground results of a replay's shape for the
// renderers' tests and benchmarks, without running a cluster.
package reporttest

import (
	"fmt"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// Large is a replay's shape: nodes nodes holding perNode pods each, of 20
// Deployments, with one pod in a hundred unschedulable, a step and the
// first ten pods explained.
func Large(nodes, perNode int) report.Result {
	r := report.Result{Nodes: make([]report.NodeResult, nodes), Pods: make([]report.PodResult, 0, nodes*perNode)}
	for i := range r.Nodes {
		r.Nodes[i] = report.NodeResult{Name: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/256, i%256)}
	}
	unschedulable := fmt.Sprintf("Unschedulable: 0/%d nodes are available: %d Insufficient cpu", nodes, nodes)
	for i := range nodes * perNode {
		p := report.PodResult{Namespace: "prod", Name: fmt.Sprintf("app-%d-7d9f8c6b5-%05d", i%20, i), Object: fmt.Sprintf("Deployment/app-%d", i%20)}
		if i%100 == 99 {
			p.Reason = unschedulable
		} else {
			n := &r.Nodes[i%nodes]
			p.Node = n.Name
			n.Pods++
		}
		if i < 10 && p.Node != "" {
			p.Explain = explanation(p.Node, r.Nodes[(i+1)%nodes].Name)
		}
		r.Pods = append(r.Pods, p)
	}
	r.Steps = []report.StepResult{{Step: "scale Deployment prod/app-0 to 3000", Nodes: r.Nodes}}
	return r
}

// explanation is a scored attempt that chose chosen over other.
func explanation(chosen, other string) *report.Explanation {
	score := func(fit, spread int64) []report.PluginScore {
		return []report.PluginScore{
			{Plugin: "NodeResourcesFit", Normalized: fit, Weight: 1, Weighted: fit},
			{Plugin: "NodeLessPods", Normalized: spread, Weight: 3, Weighted: 3 * spread},
		}
	}
	return &report.Explanation{
		Profile: "custom-scheduler", Attempt: 1, Chosen: chosen, Feasible: 2, Scored: true,
		Plugins: []report.PluginWeight{{Name: "NodeResourcesFit", Weight: 1}, {Name: "NodeLessPods", Weight: 3}},
		Candidates: []report.Candidate{
			{Node: chosen, Chosen: true, Scores: score(80, 100), Total: 380},
			{Node: other, Scores: score(90, 50), Total: 240},
		},
	}
}
