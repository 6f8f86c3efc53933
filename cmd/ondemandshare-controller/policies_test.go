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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
)

// TestApplyPoliciesNotServed: an API server that does not serve the
// policies' group version fails the apply with an error that says so (and,
// on a minor that serves them only when switched on, how).
func TestApplyPoliciesNotServed(t *testing.T) {
	cfg, err := loadConfig(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := admission.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := admission.Render(profiles, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	client.PrependReactor("patch", "mutatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: admissionpolicy.GroupVersion.Group, Resource: "mutatingadmissionpolicies"}, "ondemandshare-batch")
	})
	err = applyPolicies(context.Background(), client, rendered)
	want := "applying MutatingAdmissionPolicy ondemandshare-batch: "
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "does not serve "+admissionpolicy.GroupVersion.String()) {
		t.Fatalf("error %v, want one that names the policy and the group version not served", err)
	}
	if served, _ := admissionpolicy.ServedBy(kubeversion.Minor, kubeversion.Minor); served.Enable != "" && !strings.Contains(err.Error(), served.Enable) {
		t.Errorf("error %v does not say how %s serves the policies (%s)", err, kubeversion.String(), served.Enable)
	}
}
