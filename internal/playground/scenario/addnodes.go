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

package scenario

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateAddedNodes checks the specs of every addNodes step as the
// scenario's nodes are checked, and that each node they make has a name of
// its own: no node of the scenario (nodes, nil when too many to expand) or
// of an earlier step has it.
func validateAddedNodes(steps []Step, nodes sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]string{}
	for name := range nodes {
		seen[name] = "nodes"
	}
	for i, st := range steps {
		if st.AddNodes == nil {
			continue
		}
		p := field.NewPath("steps").Index(i).Child("addNodes")
		if len(st.AddNodes) == 0 {
			errs = append(errs, field.Required(p, "the nodes to add"))
			continue
		}
		errs = append(errs, validateNodeSpecs(st.AddNodes, p, seen)...)
	}
	return errs
}

// withAddedNodes is nodes and the nodes the steps add, or nil when nodes
// is (too many to expand).
func withAddedNodes(nodes sets.Set[string], steps []Step) sets.Set[string] {
	if nodes == nil {
		return nil
	}
	all := nodes.Clone()
	for _, st := range steps {
		if _, expandable := countNodes(st.AddNodes); !expandable {
			return nil
		}
		for _, n := range st.AddNodes {
			all.Insert(nodeNames(n)...)
		}
	}
	return all
}

// describeAddedNodes is "nodes new-1, new-2, new-3".
func describeAddedNodes(specs []NodeSpec) string {
	var names []string
	for _, n := range specs {
		names = append(names, nodeNames(n)...)
	}
	return fmt.Sprintf("nodes %s", strings.Join(names, ", "))
}
