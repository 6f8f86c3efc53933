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

package policytest

import (
	"fmt"
	"strings"

	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// Describe is the name of an assertion that has none, made from its fields:
// "pods in payments with tier=db land only on nodes with region=eu", then
// "after step 2" with afterStep.
func Describe(a *scenario.Assertion) string {
	d := describeCheck(a)
	switch {
	case a.AfterStep == nil:
		return d
	case *a.AfterStep == 0:
		return d + " once the objects settled"
	}
	return fmt.Sprintf("%s after step %d", d, *a.AfterStep)
}

func describeCheck(a *scenario.Assertion) string {
	pods := describePods(a.Pods)
	switch {
	case a.Unschedulable != nil:
		return pods + " stay " + describeUnschedulable(a.Unschedulable)
	case a.MaxPodsPerNode != nil:
		return fmt.Sprintf("at most %d %s per node%s", *a.MaxPodsPerNode, pods, onNodes(a.Nodes))
	case a.MaxNodeCount != nil:
		return fmt.Sprintf("%s on at most %d nodes%s", pods, *a.MaxNodeCount, onNodes(a.Nodes))
	case a.MaxSpread != nil:
		return fmt.Sprintf("%s spread at most %d%s", pods, *a.MaxSpread, overNodes(a.Nodes))
	case a.MinOnNodes != nil:
		return fmt.Sprintf("%s%s on %s", describeMin(a.MinOnNodes), pods, describeNodes(a.Nodes))
	case a.SamePlacementsAs != nil:
		return fmt.Sprintf("%s placed as under %s%s", pods, a.SamePlacementsAs.Config, onNodes(a.Nodes))
	}
	return pods + " land only on " + describeNodes(a.Nodes)
}

func describePods(s *scenario.PodSelector) string {
	if s == nil {
		return "pods"
	}
	d := "pods"
	if s.Object != nil {
		d += fmt.Sprintf(" of %s %s/%s", s.Object.Kind, orDefault(s.Namespace), s.Object.Name)
	} else if s.Namespace != "" {
		d += " in " + s.Namespace
	}
	if sel := s.LabelSelector().String(); sel != "" {
		d += " with " + sel
	}
	return d
}

func describeNodes(s *scenario.NodeSelector) string {
	if s == nil {
		return "any node"
	}
	var parts []string
	if len(s.Names) > 0 {
		parts = append(parts, strings.Join(s.Names, ", "))
	}
	if sel := s.LabelSelector().String(); sel != "" {
		parts = append(parts, "with "+sel)
	}
	if len(parts) == 0 {
		return "any node"
	}
	return "nodes " + strings.Join(parts, " ")
}

func onNodes(s *scenario.NodeSelector) string {
	if s == nil {
		return ""
	}
	return " of " + describeNodes(s)
}

func overNodes(s *scenario.NodeSelector) string {
	if s == nil {
		return ""
	}
	return " over " + describeNodes(s)
}

func describeUnschedulable(c *scenario.UnschedulableCheck) string {
	if c.Plugin == "" && c.Rule == "" && c.Message == "" {
		return "unschedulable"
	}
	return "unschedulable, rejected by " + describeReject(c)
}

func describeReject(c *scenario.UnschedulableCheck) string {
	var parts []string
	if c.Plugin != "" {
		parts = append(parts, c.Plugin)
	}
	if c.Rule != "" {
		parts = append(parts, fmt.Sprintf("rule %q", c.Rule))
	}
	if c.Message != "" {
		parts = append(parts, fmt.Sprintf("with %q", c.Message))
	}
	return strings.Join(parts, " ")
}

// describeMin is "at least 3 and 30% of ", "at least 30% of ".
func describeMin(m *scenario.MinOnNodes) string {
	var parts []string
	if m.Count != nil {
		parts = append(parts, fmt.Sprint(*m.Count))
	}
	if m.Percent != nil {
		parts = append(parts, fmt.Sprintf("%d%%", *m.Percent))
	}
	return "at least " + strings.Join(parts, " and ") + " of the "
}
