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

// Package admissionpolicy is what the repository's renderers of
// MutatingAdmissionPolicies share: the API version a build renders (v1 from
// 1.36, v1beta1 for 1.35, in the mapapi_kube13*.go bridges), the shape of a
// policy on pod creation and its binding, CEL literals, applying and
// deleting the rendered objects, waiting until the API server applies them,
// writing them as YAML, and reading plugin args from a scheduler's
// KubeSchedulerConfiguration. pkg/placementpolicy/admission and
// pkg/ondemandshare/admission render with it.
package admissionpolicy

import (
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ManagedByLabel on every rendered object names the command that
	// renders it.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// NamespaceNameLabel is the label the API server puts on every
	// namespace, with its name: how a namespaceSelector selects namespaces
	// by name.
	NamespaceNameLabel = "kubernetes.io/metadata.name"
)

// Renderer says whose objects are rendered: the name prefix and
// managed-by value they carry, and the label WaitInForce's canary uses.
type Renderer struct {
	// NamePrefix starts the name of every rendered object.
	NamePrefix string
	// ManagedBy is the value of ManagedByLabel on them.
	ManagedBy string
	// CanaryKey is the label that selects WaitInForce's probe pod and the
	// annotation its canary policy writes.
	CanaryKey string
}

// ObjectMeta is the metadata of a rendered object called NamePrefix+name,
// with labels (which it may change) and ManagedByLabel.
func (r Renderer) ObjectMeta(name string, labels, annotations map[string]string) metav1.ObjectMeta {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = r.ManagedBy
	return metav1.ObjectMeta{Name: r.NamePrefix + name, Labels: labels, Annotations: annotations}
}

// Pair is one rendered policy and the binding that enables it.
type Pair struct {
	Policy  *MutatingAdmissionPolicy
	Binding *MutatingAdmissionPolicyBinding
}

// PodPolicy is a policy on the creation of pods, to be rendered.
type PodPolicy struct {
	// Meta is the policy's metadata; the binding gets a copy.
	Meta metav1.ObjectMeta
	// NamespaceSelector and ObjectSelector select the pods; nil selects all.
	NamespaceSelector, ObjectSelector *metav1.LabelSelector
	// MatchConditions select by what selectors cannot; they see neither
	// variables nor namespaceObject.
	MatchConditions []MatchCondition
	Variables       []Variable
	// Patches are JSONPatch expressions, applied in order.
	Patches       []string
	FailurePolicy FailurePolicyType
}

// Render returns the policy and its binding. The policy runs on CREATE
// only, and once per admission (reinvocationPolicy Never): the policies of
// this repository only add, and running one again would add twice.
func (p PodPolicy) Render() Pair {
	fp := p.FailurePolicy
	mutations := make([]Mutation, 0, len(p.Patches))
	for _, expr := range p.Patches {
		mutations = append(mutations, Mutation{PatchType: PatchTypeJSONPatch, JSONPatch: &JSONPatch{Expression: expr}})
	}
	policy := &MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: *p.Meta.DeepCopy(),
		Spec: MutatingAdmissionPolicySpec{
			MatchConstraints: &MatchResources{
				NamespaceSelector: p.NamespaceSelector.DeepCopy(),
				ObjectSelector:    p.ObjectSelector.DeepCopy(),
				ResourceRules: []NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}}},
			},
			MatchConditions:    p.MatchConditions,
			Variables:          p.Variables,
			Mutations:          mutations,
			FailurePolicy:      &fp,
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	binding := &MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: *p.Meta.DeepCopy(),
		Spec:       MutatingAdmissionPolicyBindingSpec{PolicyName: p.Meta.Name},
	}
	return Pair{Policy: policy, Binding: binding}
}

// NamespaceSelector selects the namespaces that sel selects, named in names
// (when not empty), and not in excluded, by NamespaceNameLabel. Nil when
// all three are empty: every namespace.
func NamespaceSelector(sel *metav1.LabelSelector, names, excluded []string) *metav1.LabelSelector {
	s := sel.DeepCopy()
	add := func(op metav1.LabelSelectorOperator, values []string) {
		if len(values) == 0 {
			return
		}
		if s == nil {
			s = &metav1.LabelSelector{}
		}
		s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: NamespaceNameLabel, Operator: op, Values: slices.Clone(values)})
	}
	add(metav1.LabelSelectorOpIn, names)
	add(metav1.LabelSelectorOpNotIn, excluded)
	return s
}

// SortedUnique returns values sorted, without repeats, as a set the
// rendered objects list in one order whatever the config's.
func SortedUnique(values []string) []string {
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}
