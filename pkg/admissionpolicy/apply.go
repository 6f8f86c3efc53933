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
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Apply creates the rendered objects, or updates those that exist, each
// policy before its binding.
func Apply(ctx context.Context, client kubernetes.Interface, pairs []Pair) error {
	api := Client(client)
	for _, p := range pairs {
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

// Delete removes the rendered objects; those already gone are no error.
func Delete(ctx context.Context, client kubernetes.Interface, pairs []Pair) error {
	api := Client(client)
	var errs []error
	for _, p := range pairs {
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
func (r Renderer) WaitInForce(ctx context.Context, client kubernetes.Interface, namespace string, timeout time.Duration) error {
	api := Client(client)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	pair := PodPolicy{
		Meta:           r.ObjectMeta("canary-"+rand.String(8), nil, nil),
		ObjectSelector: selector,
		Patches: []string{"[JSONPatch{op: 'add', path: '/metadata/annotations', value: " +
			CELMap(r.CanaryKey, CELString("seen")) + "}]"},
		FailurePolicy: Fail,
	}
	name := pair.Meta.Name
	pair.ObjectSelector.MatchLabels[r.CanaryKey] = name
	canary := pair.Render()
	if _, err := api.MutatingAdmissionPolicies().Create(ctx, canary.Policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the canary policy: %w%s", err, notServedHint(err))
	}
	defer func() {
		// Not the caller's context: the canary goes even when it is done.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = api.MutatingAdmissionPolicyBindings().Delete(cleanup, name, metav1.DeleteOptions{})
		_ = api.MutatingAdmissionPolicies().Delete(cleanup, name, metav1.DeleteOptions{})
	}()
	if _, err := api.MutatingAdmissionPolicyBindings().Create(ctx, canary.Binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the canary binding: %w", err)
	}
	probe := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{r.CanaryKey: name}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods(namespace).Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err
			return false, nil
		}
		return got.Annotations[r.CanaryKey] == "seen", nil
	})
	if err != nil {
		return fmt.Errorf("the API server did not apply the canary admission policy %s within %s (last error: %v): %w", name, timeout, last, err)
	}
	return nil
}
