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

package admissionpolicy

import (
	mapapi "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	mapclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// This file bridges the MutatingAdmissionPolicy API the renderers write and
// apply: admissionregistration.k8s.io/v1, which exists since 1.36.
// Rule, RuleWithOperations, OperationType and ReinvocationPolicyType are
// v1's in every minor (v1beta1 aliases them), so they are not bridged.

// The MutatingAdmissionPolicy types of the version this build renders.
type (
	MutatingAdmissionPolicy            = mapapi.MutatingAdmissionPolicy
	MutatingAdmissionPolicySpec        = mapapi.MutatingAdmissionPolicySpec
	MutatingAdmissionPolicyBinding     = mapapi.MutatingAdmissionPolicyBinding
	MutatingAdmissionPolicyBindingSpec = mapapi.MutatingAdmissionPolicyBindingSpec
	MatchResources                     = mapapi.MatchResources
	NamedRuleWithOperations            = mapapi.NamedRuleWithOperations
	MatchCondition                     = mapapi.MatchCondition
	Variable                           = mapapi.Variable
	Mutation                           = mapapi.Mutation
	JSONPatch                          = mapapi.JSONPatch
)

// FailurePolicyType is what a policy does when its expressions fail.
type FailurePolicyType = mapapi.FailurePolicyType

// The failure policies.
const (
	Ignore = mapapi.Ignore
	Fail   = mapapi.Fail
)

// PatchTypeJSONPatch is the patch type the renderers write.
const PatchTypeJSONPatch = mapapi.PatchTypeJSONPatch

// GroupVersion is the group/version of the rendered objects.
var GroupVersion = mapapi.SchemeGroupVersion

// ClientInterface is the typed client of that group/version.
type ClientInterface = mapclient.AdmissionregistrationV1Interface

// Client returns the typed client of that group/version.
func Client(client kubernetes.Interface) ClientInterface {
	return client.AdmissionregistrationV1()
}
