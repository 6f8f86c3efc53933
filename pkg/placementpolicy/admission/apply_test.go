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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// TestApplyTwiceAndDelete applies the same rules twice (the second time with
// a changed weight, as after a config change), then deletes them twice.
func TestApplyTwiceAndDelete(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset()
	render := func(weight int32) *Result {
		res, err := Render([]ProfileArgs{{SchedulerName: "s", Score: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{{
			Name: "spot", Namespaces: []string{"batch"}, Action: config.PlacementPrefer, Weight: weight,
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"capacity-type": "spot"}},
		}}}}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if err := Apply(ctx, client, render(10)); err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	if err := Apply(ctx, client, render(90)); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	got, err := admissionpolicy.Client(client).MutatingAdmissionPolicies().Get(ctx, "placementpolicy-spot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"weight": dyn(90), "preference": dyn({"matchExpressions": variables.requirements})}`; got.Spec.Variables[1].Expression != want {
		t.Errorf("after the second Apply the preferred term is %s, want %s", got.Spec.Variables[1].Expression, want)
	}
	if _, err := admissionpolicy.Client(client).MutatingAdmissionPolicyBindings().Get(ctx, "placementpolicy-spot", metav1.GetOptions{}); err != nil {
		t.Errorf("binding: %v", err)
	}
	for i := range 2 {
		if err := Delete(ctx, client, render(90)); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
	list, err := admissionpolicy.Client(client).MutatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("after Delete: %d policies left (%v)", len(list.Items), err)
	}
}

// TestApplyNotServed applies to an API server that does not serve the
// policies' version: on 1.35, where it is off by default, the error says
// what switches it on; on later minors it is the API server's error alone.
func TestApplyNotServed(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset()
	client.PrependReactor("create", "mutatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: admissionpolicy.GroupVersion.Group, Resource: "mutatingadmissionpolicies"}, "")
	})
	res, err := Render([]ProfileArgs{{SchedulerName: "s", Filter: true, Args: &config.PlacementPolicyArgs{Rules: []config.PlacementRule{regionRule("eu", "a")}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = Apply(ctx, client, res)
	if err == nil {
		t.Fatal("Apply succeeded against an API server without the policies")
	}
	const hint = "feature gate MutatingAdmissionPolicy=true"
	if want := !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1); strings.Contains(err.Error(), hint) != want {
		t.Errorf("Apply on 1.%d: %v; want the hint %q: %v", kubeversion.Minor, err, hint, want)
	}
}
