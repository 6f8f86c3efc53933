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
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// ownerOf is the controller, as apiVersion/kind, of the pods of each
// workload kind. A Deployment's pods are its ReplicaSets': admission sees
// only the pod, so a policy that counts Deployments also selects the pods
// of a ReplicaSet no Deployment owns, and the controller tells them apart.
var ownerOf = map[config.WorkloadKind]string{
	config.WorkloadDeployment:  "apps/v1/ReplicaSet",
	config.WorkloadReplicaSet:  "apps/v1/ReplicaSet",
	config.WorkloadStatefulSet: "apps/v1/StatefulSet",
	config.WorkloadJob:         "batch/v1/Job",
}

// ownerKinds returns the controllers, as apiVersion/kind, whose pods the
// kinds count, sorted.
func ownerKinds(kinds []config.WorkloadKind) ([]string, error) {
	if len(kinds) == 0 {
		return nil, fmt.Errorf("workloadKinds is empty: the args must be defaulted, which counts Deployment, StatefulSet and Job")
	}
	var owners []string
	for _, k := range kinds {
		owner, ok := ownerOf[k]
		if !ok {
			return nil, fmt.Errorf("workloadKinds: %q: must be %s, %s, %s or %s", k,
				config.WorkloadDeployment, config.WorkloadReplicaSet, config.WorkloadStatefulSet, config.WorkloadJob)
		}
		owners = append(owners, owner)
	}
	slices.Sort(owners)
	return slices.Compact(owners), nil
}

// namespaceSelector selects the namespaces of the policy: its
// namespaceSelector, its namespaces by name, none of the excluded ones.
func (g *policyGroup) namespaceSelector() *metav1.LabelSelector {
	return admissionpolicy.NamespaceSelector(g.policy.NamespaceSelector, g.policy.Namespaces, g.excluded)
}

func (g *policyGroup) scheduledBy() string {
	return "object.spec.schedulerName in " + admissionpolicy.CELStrings(g.schedulerNames)
}

func ownedBy(owners []string) string {
	return "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r,\n" +
		"  has(r.controller) && r.controller && r.apiVersion + '/' + r.kind in " + admissionpolicy.CELStrings(owners) + ")"
}

// matchConditions select by what selectors cannot: the pod's schedulerName
// (set to default-scheduler by defaulting, before admission, when the pod
// names none), its controller, and that it is not bound yet nor labelled
// by a policy. They cannot see the namespace (matchConditions get no
// namespaceObject), hence claimedBy is a variable.
func (g *policyGroup) matchConditions(owners []string) []admissionpolicy.MatchCondition {
	return []admissionpolicy.MatchCondition{
		{Name: "scheduled-by-a-profile-that-holds-the-policy", Expression: g.scheduledBy()},
		{Name: "owned-by-a-workload-the-policy-counts", Expression: ownedBy(owners)},
		// The API server refuses a pod created with spec.nodeName and gates.
		{Name: "not-bound-to-a-node", Expression: "!has(object.spec.nodeName) || object.spec.nodeName == ''"},
		// A policy that ran before this one labelled it.
		{Name: "not-labelled-by-a-policy", Expression: "!has(object.metadata.labels) || !(" +
			admissionpolicy.CELString(share.PolicyLabel) + " in object.metadata.labels)"},
	}
}

// claimedVar is true when an earlier policy by name selects the pod.
const claimedVar = "claimedByAnEarlierPolicy"

// claimedBy is a CEL expression true for the pods one of the earlier
// policies selects, which they, not this one, gate and label; empty when
// there is none. It restates each one's selection but for what every
// policy shares (no nodeName, no policy label).
func claimedBy(earlier []*policyGroup) (string, error) {
	var alts []string
	for _, e := range earlier {
		owners, err := ownerKinds(e.policy.WorkloadKinds)
		if err != nil {
			return "", fmt.Errorf("policy %q: %w", e.policy.Name, err)
		}
		terms := []string{e.scheduledBy(), ownedBy(owners)}
		for _, t := range []string{
			admissionpolicy.CELSelects("namespaceObject.metadata.labels", e.namespaceSelector()),
			admissionpolicy.CELSelects("object.metadata.labels", e.policy.PodSelector),
		} {
			if t != "true" {
				terms = append(terms, t)
			}
		}
		alts = append(alts, "(// "+e.policy.Name+"\n  "+strings.Join(terms, "\n  && ")+")")
	}
	return strings.Join(alts, "\n|| "), nil
}

// unlessClaimed wraps a JSONPatch expression so that it patches nothing
// when an earlier policy claims the pod.
func unlessClaimed(expr string, guarded bool) string {
	if !guarded {
		return expr
	}
	return "variables." + claimedVar + " ? [] : (\n" + expr + ")"
}

// gatePatch adds share.SchedulingGate to the pod's gates, after any it has
// (Kueue's...), once.
func gatePatch(guarded bool) string {
	name := admissionpolicy.CELString(share.SchedulingGate)
	gate := admissionpolicy.CELMap("name", name)
	return unlessClaimed("!has(object.spec.schedulingGates) || size(object.spec.schedulingGates) == 0\n"+
		"  ? [JSONPatch{op: 'add', path: '/spec/schedulingGates', value: ["+gate+"]}]\n"+
		": object.spec.schedulingGates.exists(g, g.name == "+name+")\n"+
		"  ? []\n"+
		": [JSONPatch{op: 'add', path: '/spec/schedulingGates/-', value: "+gate+"}]\n", guarded)
}

// labelPatch sets share.PolicyLabel to the policy's name.
func labelPatch(policy string, guarded bool) string {
	key := admissionpolicy.CELString(share.PolicyLabel)
	value := admissionpolicy.CELString(policy)
	return unlessClaimed("!has(object.metadata.labels)\n"+
		"  ? [JSONPatch{op: 'add', path: '/metadata/labels', value: "+admissionpolicy.CELMap(share.PolicyLabel, value)+"}]\n"+
		": [JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey("+key+"), value: "+value+"}]\n", guarded)
}
