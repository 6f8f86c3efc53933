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

package match

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PodRules are the rules that apply to one pod, in the order of the args.
type PodRules struct {
	Required  []*Rule
	Preferred []*Rule
}

// Empty reports whether no rule applies.
func (p PodRules) Empty() bool { return len(p.Required)+len(p.Preferred) == 0 }

// Admits reports whether node matches every Require rule, and names the
// first rule (in the order of the args) that it does not match otherwise.
func (p PodRules) Admits(node *v1.Node) (ok bool, rule string) {
	if i := p.Rejecting(node); i >= 0 {
		return false, p.Required[i].name
	}
	return true, ""
}

// Rejecting returns the index in Required of the first rule that node does
// not match, or -1 when it matches them all.
func (p PodRules) Rejecting(node *v1.Node) int {
	set := labels.Set(node.Labels)
	for i, r := range p.Required {
		if !r.nodes.Matches(set) {
			return i
		}
	}
	return -1
}

// Preference is the raw score of node: the summed weights of the Prefer
// rules it matches.
func (p PodRules) Preference(node *v1.Node) int64 {
	set := labels.Set(node.Labels)
	var sum int64
	for _, r := range p.Preferred {
		if r.nodes.Matches(set) {
			sum += r.weight
		}
	}
	return sum
}

// Names returns the names of the rules, sorted: how logs, tests and the
// plugin's pod signature name a rule set.
func (p PodRules) Names() []string {
	if p.Empty() {
		return nil
	}
	names := make([]string, 0, len(p.Required)+len(p.Preferred))
	for _, r := range p.Required {
		names = append(names, r.name)
	}
	for _, r := range p.Preferred {
		names = append(names, r.name)
	}
	slices.Sort(names)
	return names
}

func (p PodRules) String() string {
	return "[" + strings.Join(p.Names(), " ") + "]"
}
