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
	"context"
	"errors"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// canaryAnnotation is what the canary policy of WaitInForce writes.
const canaryAnnotation = "placementpolicy.adminsched.io/canary"

// Apply creates the rendered objects, or updates those that exist, each
// policy before its binding.
func Apply(ctx context.Context, client kubernetes.Interface, res *Result) error {
	api := mapClient(client)
	for _, p := range res.Policies {
		if err := createOrUpdate(ctx, p.Policy.Name, "MutatingAdmissionPolicy",
			func() error {
				_, err := api.MutatingAdmissionPolicies().Create(ctx, p.Policy, metav1.CreateOptions{})
				return err
			},
			func() error {
				old, err := api.MutatingAdmissionPolicies().Get(ctx, p.Policy.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				obj := p.Policy.DeepCopy()
				obj.ResourceVersion = old.ResourceVersion
				_, err = api.MutatingAdmissionPolicies().Update(ctx, obj, metav1.UpdateOptions{})
				return err
			}); err != nil {
			return err
		}
		if err := createOrUpdate(ctx, p.Binding.Name, "MutatingAdmissionPolicyBinding",
			func() error {
				_, err := api.MutatingAdmissionPolicyBindings().Create(ctx, p.Binding, metav1.CreateOptions{})
				return err
			},
			func() error {
				old, err := api.MutatingAdmissionPolicyBindings().Get(ctx, p.Binding.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				obj := p.Binding.DeepCopy()
				obj.ResourceVersion = old.ResourceVersion
				_, err = api.MutatingAdmissionPolicyBindings().Update(ctx, obj, metav1.UpdateOptions{})
				return err
			}); err != nil {
			return err
		}
	}
	return nil
}

func createOrUpdate(ctx context.Context, name, kind string, create, update func() error) error {
	err := create()
	if apierrors.IsAlreadyExists(err) {
		err = update()
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w%s", kind, name, err, notServedHint(err))
	}
	klog.FromContext(ctx).V(2).Info("Applied", "kind", kind, "name", name)
	return nil
}

// notServedHint says, after err, what an API server of this build's minor
// needs to serve the policies, when err may be that it does not: 1.35
// serves them only when switched on.
func notServedHint(err error) string {
	served, _ := ServedBy(kubeversion.Minor, kubeversion.Minor)
	if served.Enable == "" || !apierrors.IsNotFound(err) {
		return ""
	}
	return fmt.Sprintf(" (Kubernetes 1.%d serves MutatingAdmissionPolicy as %s only with %s)", served.Minor, served.Version, served.Enable)
}

// Delete removes the rendered objects; those already gone are no error.
func Delete(ctx context.Context, client kubernetes.Interface, res *Result) error {
	api := mapClient(client)
	var errs []error
	for _, p := range res.Policies {
		if err := api.MutatingAdmissionPolicyBindings().Delete(ctx, p.Binding.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		if err := api.MutatingAdmissionPolicies().Delete(ctx, p.Policy.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WaitInForce returns once the API server applies every policy and binding
// created before the call, or fails after timeout. The API server learns of
// policies and bindings through one watch of each, which delivers them in
// the order they were written; so a canary policy and binding written after
// them, once seen mutating a dry-run pod in namespace, mean every earlier
// one is in force too. The canary is deleted before WaitInForce returns.
func WaitInForce(ctx context.Context, client kubernetes.Interface, namespace string, timeout time.Duration) error {
	api := mapClient(client)
	name := NamePrefix + "canary-" + rand.String(8)
	fp := Fail
	policy := &mutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{managedByLabel: managedBy}},
		Spec: mutatingAdmissionPolicySpec{
			MatchConstraints: &matchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{canaryAnnotation: name}},
				ResourceRules: []namedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}}},
			},
			Mutations: []mutation{{PatchType: patchTypeJSONPatch, JSONPatch: &jsonPatch{
				Expression: "[JSONPatch{op: 'add', path: '/metadata/annotations', value: " + celMap(canaryAnnotation, celString("seen")) + "}]",
			}}},
			FailurePolicy:      &fp,
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	binding := &mutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{managedByLabel: managedBy}},
		Spec:       mutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}
	if _, err := api.MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the canary policy: %w%s", err, notServedHint(err))
	}
	defer func() {
		// Not the caller's context: the canary goes even when it is done.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = api.MutatingAdmissionPolicyBindings().Delete(cleanup, name, metav1.DeleteOptions{})
		_ = api.MutatingAdmissionPolicies().Delete(cleanup, name, metav1.DeleteOptions{})
	}()
	if _, err := api.MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the canary binding: %w", err)
	}
	probe := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{canaryAnnotation: name}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods(namespace).Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err
			return false, nil
		}
		return got.Annotations[canaryAnnotation] == "seen", nil
	})
	if err != nil {
		return fmt.Errorf("the API server did not apply the canary admission policy %s within %s (last error: %v): %w", name, timeout, last, err)
	}
	return nil
}
