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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/controller"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// ownedSelector selects the admission policies and bindings this command
// applied: its managed-by label and a policy label. WaitInForce's canaries
// carry the first only, so pruning never deletes one in flight.
func ownedSelector() string {
	managed, _ := labels.NewRequirement(admissionpolicy.ManagedByLabel, selection.Equals, []string{admission.Renderer.ManagedBy})
	policy, _ := labels.NewRequirement(share.PolicyLabel, selection.Exists, nil)
	return labels.NewSelector().Add(*managed, *policy).String()
}

// applyPolicies server-side applies the rendered policies, each before its
// binding, as field manager controller.FieldManager, then deletes the ones
// it owns that res no longer has: the config is the only source of truth.
func applyPolicies(ctx context.Context, client kubernetes.Interface, res *admission.Result) error {
	api := admissionpolicy.Client(client)
	opts := metav1.PatchOptions{FieldManager: controller.FieldManager, Force: ptr.To(true)}
	wanted := make([]string, 0, len(res.Policies))
	for _, p := range res.Pairs() {
		wanted = append(wanted, p.Policy.Name)
		policy, err := json.Marshal(p.Policy)
		if err != nil {
			return err
		}
		if _, err := api.MutatingAdmissionPolicies().Patch(ctx, p.Policy.Name, types.ApplyPatchType, policy, opts); err != nil {
			return applyError("MutatingAdmissionPolicy", p.Policy.Name, err)
		}
		binding, err := json.Marshal(p.Binding)
		if err != nil {
			return err
		}
		if _, err := api.MutatingAdmissionPolicyBindings().Patch(ctx, p.Binding.Name, types.ApplyPatchType, binding, opts); err != nil {
			return applyError("MutatingAdmissionPolicyBinding", p.Binding.Name, err)
		}
	}
	stale, err := stalePolicies(ctx, api, wanted)
	if err != nil {
		return err
	}
	if err := admissionpolicy.Delete(ctx, client, stale); err != nil {
		return fmt.Errorf("deleting admission policies the config no longer has: %w", err)
	}
	klog.FromContext(ctx).Info("Applied the admission policies", "applied", wanted, "deleted", len(stale))
	return nil
}

// applyError names the object that failed and, for NotFound (an apply
// creates what is missing, so the API server does not serve the group
// version), what serves it.
func applyError(kind, name string, err error) error {
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("applying %s %s: %w", kind, name, err)
	}
	hint := fmt.Sprintf("the API server does not serve %s", admissionpolicy.GroupVersion)
	if served, _ := admissionpolicy.ServedBy(kubeversion.Minor, kubeversion.Minor); served.Enable != "" {
		hint += fmt.Sprintf(": Kubernetes %s serves it only with %s", kubeversion.String(), served.Enable)
	}
	return fmt.Errorf("applying %s %s: %w (%s)", kind, name, err, hint)
}

// stalePolicies returns, as pairs for admissionpolicy.Delete, the owned
// policies and bindings whose names are not wanted (a binding is named
// after its policy).
func stalePolicies(ctx context.Context, api admissionpolicy.ClientInterface, wanted []string) ([]admissionpolicy.Pair, error) {
	list := metav1.ListOptions{LabelSelector: ownedSelector()}
	policies, err := api.MutatingAdmissionPolicies().List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("listing MutatingAdmissionPolicies: %w", err)
	}
	bindings, err := api.MutatingAdmissionPolicyBindings().List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("listing MutatingAdmissionPolicyBindings: %w", err)
	}
	var names []string
	for _, p := range policies.Items {
		names = append(names, p.Name)
	}
	for _, b := range bindings.Items {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	var stale []admissionpolicy.Pair
	for _, name := range slices.Compact(names) {
		if !slices.Contains(wanted, name) {
			meta := metav1.ObjectMeta{Name: name}
			stale = append(stale, admissionpolicy.Pair{
				Policy:  &admissionpolicy.MutatingAdmissionPolicy{ObjectMeta: meta},
				Binding: &admissionpolicy.MutatingAdmissionPolicyBinding{ObjectMeta: meta},
			})
		}
	}
	return stale, nil
}
