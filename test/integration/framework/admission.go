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

// MutatingAdmissionPolicy is admissionregistration.k8s.io/v1 from 1.36 on;
// 1.35's API has it in v1beta1, off by default.

package framework

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// CreateMutatingAdmissionPolicies creates the MutatingAdmissionPolicies and
// their bindings of the kustomization in dir (built as Kustomize does; its
// other objects are left out) and deletes them when t ends.
func CreateMutatingAdmissionPolicies(ctx context.Context, t testing.TB, client kubernetes.Interface, dir string) {
	t.Helper()
	regs := client.AdmissionregistrationV1()
	for _, u := range Kustomize(t, dir) {
		var err error
		switch u.GetKind() {
		case "MutatingAdmissionPolicy":
			p := &admissionv1.MutatingAdmissionPolicy{}
			if err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err == nil {
				_, err = regs.MutatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{})
				t.Cleanup(func() {
					_ = regs.MutatingAdmissionPolicies().Delete(context.Background(), p.Name, metav1.DeleteOptions{})
				})
			}
		case "MutatingAdmissionPolicyBinding":
			b := &admissionv1.MutatingAdmissionPolicyBinding{}
			if err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b); err == nil {
				_, err = regs.MutatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{})
				t.Cleanup(func() {
					_ = regs.MutatingAdmissionPolicyBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
				})
			}
		default:
			continue
		}
		if err != nil {
			t.Fatalf("creating the %s %s of %s: %v", u.GetKind(), u.GetName(), dir, err)
		}
	}
}
