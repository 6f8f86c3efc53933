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

package admission

import (
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

// matchConditions select by what selectors cannot: the pod's schedulerName
// (set to default-scheduler by defaulting, before admission, when the pod
// names none), and its controller for the DaemonSet exemption (the plugin's
// podowner.IsDaemonSetPod).
func (g *ruleGroup) matchConditions() []admissionpolicy.MatchCondition {
	conds := []admissionpolicy.MatchCondition{{
		Name:       "scheduled-by-a-profile-that-runs-the-rule",
		Expression: "object.spec.schedulerName in " + admissionpolicy.CELStrings(g.schedulerNames),
	}}
	if g.ignoreDaemonSet {
		conds = append(conds, admissionpolicy.MatchCondition{
			Name: "not-a-daemonset-pod",
			Expression: "!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(r, " +
				"has(r.controller) && r.controller && r.kind == 'DaemonSet' && r.apiVersion == 'apps/v1')",
		})
	}
	return conds
}

const (
	affinityPath = "/spec/affinity"
	nodePath     = affinityPath + "/nodeAffinity"
	requiredPath = nodePath + "/requiredDuringSchedulingIgnoredDuringExecution"
	preferPath   = nodePath + "/preferredDuringSchedulingIgnoredDuringExecution"
)

// patch is the JSONPatch expression of the rule: it adds what is missing at
// the first level the pod lacks, and otherwise narrows or extends what the
// pod has.
func (g *ruleGroup) patch() string {
	addAt := func(path, value string) string {
		return "[JSONPatch{op: 'add', path: '" + path + "', value: " + value + "}]"
	}
	const (
		required  = "requiredDuringSchedulingIgnoredDuringExecution"
		preferred = "preferredDuringSchedulingIgnoredDuringExecution"
	)
	// field is what the rule adds under nodeAffinity, path where it goes,
	// and whenPresent the patch for a pod that already has that field.
	var field, value, path, whenPresent string
	if g.rule.Action == config.PlacementRequire {
		field, path = required, requiredPath
		value = admissionpolicy.CELMap("nodeSelectorTerms", "["+admissionpolicy.CELMap("matchExpressions", requirementsVar)+"]")
		// Every term that can match a node is narrowed; an empty term
		// matches no node and must stay so.
		term := "'" + requiredPath + "/nodeSelectorTerms/' + string(i) + '/matchExpressions"
		whenPresent = "object.spec.affinity.nodeAffinity." + required + ".nodeSelectorTerms.transformList(i, t,\n" +
			"    (has(t.matchExpressions) && size(t.matchExpressions) > 0) || (has(t.matchFields) && size(t.matchFields) > 0),\n" +
			"    has(t.matchExpressions)\n" +
			"      ? " + requirementsVar + ".map(r, JSONPatch{op: 'add', path: " + term + "/-', value: r})\n" +
			"      : [JSONPatch{op: 'add', path: " + term + "', value: " + requirementsVar + "}]\n" +
			"  ).flatten()"
	} else {
		field, path = preferred, preferPath
		value = "[" + termVar + "]"
		whenPresent = addAt(preferPath+"/-", termVar)
	}
	return "!has(object.spec.affinity)\n" +
		"  ? " + addAt(affinityPath, admissionpolicy.CELMap("nodeAffinity", admissionpolicy.CELMap(field, value))) + "\n" +
		": !has(object.spec.affinity.nodeAffinity)\n" +
		"  ? " + addAt(nodePath, admissionpolicy.CELMap(field, value)) + "\n" +
		": !has(object.spec.affinity.nodeAffinity." + field + ")\n" +
		"  ? " + addAt(path, value) + "\n" +
		": " + whenPresent + "\n"
}

const (
	requirementsVar = "variables.requirements"
	termVar         = "variables.preferredTerm"
)

// variables are the rule's node selector requirements, and for a Prefer rule
// the preferred term that holds them.
func (g *ruleGroup) variables(reqs []v1.NodeSelectorRequirement) []admissionpolicy.Variable {
	vars := []admissionpolicy.Variable{{Name: "requirements", Expression: admissionpolicy.CELRequirements(reqs)}}
	if g.rule.Action == config.PlacementPrefer {
		vars = append(vars, admissionpolicy.Variable{Name: "preferredTerm",
			Expression: admissionpolicy.CELMap("weight", strconv.Itoa(int(g.rule.Weight)), "preference", admissionpolicy.CELMap("matchExpressions", requirementsVar))})
	}
	return vars
}

// annotate is the JSONPatch expression that appends the rule's name to the
// pod's AdmittedRulesAnnotation.
func (g *ruleGroup) annotate() string {
	key := admissionpolicy.CELString(AdmittedRulesAnnotation)
	name := admissionpolicy.CELString(g.rule.Name)
	path := "'/metadata/annotations/' + jsonpatch.escapeKey(" + key + ")"
	return "!has(object.metadata.annotations)\n" +
		"  ? [JSONPatch{op: 'add', path: '/metadata/annotations', value: " + admissionpolicy.CELMap(AdmittedRulesAnnotation, name) + "}]\n" +
		": !(" + key + " in object.metadata.annotations)\n" +
		"  ? [JSONPatch{op: 'add', path: " + path + ", value: " + name + "}]\n" +
		": [JSONPatch{op: 'replace', path: " + path + ", value: object.metadata.annotations[" + key + "] + ',' + " + name + "}]\n"
}
