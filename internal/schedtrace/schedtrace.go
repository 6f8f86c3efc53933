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

// Package schedtrace holds what the scheduling framework computed in a
// pod's last scheduling attempt: the PreFilter verdict, each node's Filter
// status, each plugin's raw and weighted score per node with the
// framework's own total, and the node the pod was reserved on. Package
// recorder fills it from a running scheduler; this package imports no
// scheduler and no client, so that what explains an attempt (the
// playground's report) stays pure.
package schedtrace

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// Status is a non-success status of a plugin, as the framework returned it.
type Status struct {
	// Code is the status code: Unschedulable, UnschedulableAndUnresolvable,
	// Error, ...
	Code string
	// Plugin is the plugin that returned the status, empty when unknown.
	Plugin string
	// Reasons are the status' reasons.
	Reasons []string
}

// PluginScore is one score plugin's result for a node.
type PluginScore struct {
	Plugin string
	// Raw is what the plugin's Score returned; 0 on minors whose framework
	// does not report it (kubeversion.RawScores).
	Raw int64
	// Weighted is the score after NormalizeScore (if the plugin has one),
	// times the plugin's weight: what the framework adds up.
	Weighted int64
}

// NodeScore is a node's scores as RunScorePlugins returned them.
type NodeScore struct {
	Node string
	// Plugins are in the framework's order of score plugins; plugins that
	// PreScore skipped for the pod are absent.
	Plugins []PluginScore
	// Total is the framework's TotalScore: the sum of Plugins[*].Weighted.
	Total int64
}

// Attempt is what the framework computed in one scheduling attempt of a pod.
type Attempt struct {
	// Profile is the scheduler name of the profile that scheduled the pod.
	Profile string
	Pod     types.NamespacedName
	UID     types.UID
	// Number counts the pod's attempts, 1 for the first.
	Number int
	// Weights are the profile's score plugin weights.
	Weights map[string]int
	// PreFilter is the PreFilter rejection (of every node), nil if none.
	PreFilter *Status
	// PreFilterNodes, when not nil, are the only nodes the PreFilter result
	// allowed, narrowed by PreFilterPlugins.
	PreFilterNodes   []string
	PreFilterPlugins []string
	// Filter holds every node the Filter plugins ran on: nil for a node
	// that passed them all, else the first rejection.
	Filter map[string]*Status
	// Scores are RunScorePlugins' results, nil when the attempt did not
	// score (a single feasible node is taken unscored).
	Scores []NodeScore
	// Nominated is the node PostFilter (preemption) nominated, if any.
	Nominated string
	// Reserved is the node the pod was reserved on: the scheduler's choice.
	Reserved string
	// Failure is the message of the attempt's failure, empty if none was
	// reported.
	Failure string
}

// Clone returns a deep copy of a.
func (a *Attempt) Clone() Attempt {
	c := *a
	c.Weights = maps.Clone(a.Weights)
	c.Filter = maps.Clone(a.Filter)
	c.Scores = slices.Clone(a.Scores)
	for i := range c.Scores {
		c.Scores[i].Plugins = slices.Clone(c.Scores[i].Plugins)
	}
	return c
}
