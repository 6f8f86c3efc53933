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

package share

import (
	v1 "k8s.io/api/core/v1"
)

// RequireClass returns a deep copy of aff whose required node affinity also
// demands reqs, changed only as the API server lets a gated pod's update
// change it (validateNodeAffinityMutation in k8s.io/kubernetes
// pkg/apis/core/validation/validation.go):
//
//   - with no required terms, anything may be set: one term holding reqs;
//   - otherwise the number of terms is fixed and a term may only gain
//     expressions after its own, so reqs are appended to every term, which
//     ANDs them into the whole OR of terms. An empty term must stay empty;
//     it matches no node, so ANDing into it would change nothing anyway.
//
// Preferred terms and pod (anti)affinity are kept as they are. aff and reqs
// are never changed; empty reqs return the copy unchanged, since an empty
// term would match no node.
func RequireClass(aff *v1.Affinity, reqs []v1.NodeSelectorRequirement) *v1.Affinity {
	out := aff.DeepCopy()
	if out == nil {
		out = &v1.Affinity{}
	}
	if len(reqs) == 0 {
		return out
	}
	if out.NodeAffinity == nil {
		out.NodeAffinity = &v1.NodeAffinity{}
	}
	na := out.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: copyRequirements(reqs)}},
		}
		return out
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		if len(terms[i].MatchExpressions) == 0 && len(terms[i].MatchFields) == 0 {
			continue
		}
		terms[i].MatchExpressions = append(terms[i].MatchExpressions, copyRequirements(reqs)...)
	}
	return out
}

// copyRequirements deep-copies reqs so that no two terms, and not the
// caller, share a Values array.
func copyRequirements(reqs []v1.NodeSelectorRequirement) []v1.NodeSelectorRequirement {
	out := make([]v1.NodeSelectorRequirement, len(reqs))
	for i := range reqs {
		reqs[i].DeepCopyInto(&out[i])
	}
	return out
}
