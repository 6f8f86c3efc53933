//go:build !kube1.35

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
	mapapi "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	mapclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// This file bridges the MutatingAdmissionPolicy API the package renders and
// applies: admissionregistration.k8s.io/v1, which exists since 1.36.
// Rule, RuleWithOperations, OperationType and ReinvocationPolicyType are
// v1's in every minor (v1beta1 aliases them), so they are not bridged.

type (
	mutatingAdmissionPolicy            = mapapi.MutatingAdmissionPolicy
	mutatingAdmissionPolicySpec        = mapapi.MutatingAdmissionPolicySpec
	mutatingAdmissionPolicyBinding     = mapapi.MutatingAdmissionPolicyBinding
	mutatingAdmissionPolicyBindingSpec = mapapi.MutatingAdmissionPolicyBindingSpec
	matchResources                     = mapapi.MatchResources
	namedRuleWithOperations            = mapapi.NamedRuleWithOperations
	matchCondition                     = mapapi.MatchCondition
	variable                           = mapapi.Variable
	mutation                           = mapapi.Mutation
	jsonPatch                          = mapapi.JSONPatch
)

// FailurePolicyType is what Options.FailurePolicy takes.
type FailurePolicyType = mapapi.FailurePolicyType

// The failure policies.
const (
	Ignore = mapapi.Ignore
	Fail   = mapapi.Fail
)

const patchTypeJSONPatch = mapapi.PatchTypeJSONPatch

// mapGroupVersion is the group/version of the rendered objects.
var mapGroupVersion = mapapi.SchemeGroupVersion

// mapClient is the typed client of that group/version.
func mapClient(client kubernetes.Interface) mapclient.AdmissionregistrationV1Interface {
	return client.AdmissionregistrationV1()
}
