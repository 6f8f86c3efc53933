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

package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// testCRD is a CRD of widgets.example.com with the given conditions.
func testCRD(conds ...apiextensionsv1.CustomResourceDefinitionCondition) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Scope: apiextensionsv1.ClusterScoped,
			// The first version is not served: the wait is for the served one.
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1"}, {Name: "v1", Served: true, Storage: true}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: conds},
	}
}

var (
	established = apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}
	namesTaken  = apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted,
		Status: apiextensionsv1.ConditionFalse, Message: "kind Widget is already in use"}
	widgets = &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget"}}}
)

func TestInstallCRD(t *testing.T) {
	const timeout = 500 * time.Millisecond
	for _, tc := range []struct {
		name string
		// crd is what the API server returns once it is created; existing
		// is there before InstallCRD.
		crd, existing *apiextensionsv1.CustomResourceDefinition
		discovery     []*metav1.APIResourceList
		listFails     bool
		opts          CRDOptions
		// want is "" or a piece of the error; fast, that the error comes
		// before the timeout.
		want string
		fast bool
	}{{
		name: "served", crd: testCRD(established), discovery: []*metav1.APIResourceList{widgets},
	}, {
		name: "not established", crd: testCRD(), discovery: []*metav1.APIResourceList{widgets},
		want: "CRD widgets.example.com is not served (waiting for Established)",
	}, {
		name: "group version not in discovery", crd: testCRD(established),
		discovery: []*metav1.APIResourceList{{GroupVersion: "example.com/v1alpha1", APIResources: widgets.APIResources}},
		want:      "CRD widgets.example.com is not served (waiting for discovery to list example.com/v1)",
	}, {
		name: "resource not in discovery", crd: testCRD(established),
		discovery: []*metav1.APIResourceList{{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "gadgets"}}}},
		want:      "CRD widgets.example.com is not served (waiting for discovery to list widgets in example.com/v1)",
	}, {
		name: "list fails", crd: testCRD(established), discovery: []*metav1.APIResourceList{widgets}, listFails: true,
		want: "CRD widgets.example.com is not served (waiting for a List of widgets (the handler is not there yet))",
	}, {
		name: "names not accepted", crd: testCRD(namesTaken), discovery: []*metav1.APIResourceList{widgets},
		want: "names not accepted: kind Widget is already in use", fast: true,
	}, {
		name: "exists", crd: testCRD(established), existing: testCRD(established), discovery: []*metav1.APIResourceList{widgets},
		want: "creating CRD widgets.example.com", fast: true,
	}, {
		name: "exists, may exist", crd: testCRD(established), existing: testCRD(established), discovery: []*metav1.APIResourceList{widgets},
		opts: CRDOptions{MayExist: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.existing != nil {
				objs = append(objs, tc.existing)
			}
			// NewClientset of 1.35 has no CRD in its field-management schema.
			crds := apiextensionsfake.NewSimpleClientset(objs...).ApiextensionsV1().CustomResourceDefinitions()
			disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.discovery}}
			gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "WidgetList"})
			if tc.listFails {
				dyn.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("the handler is not there yet")
				})
			}
			opts := tc.opts
			opts.Timeout = timeout
			start := time.Now()
			err := installCRD(context.Background(), crds, disc, dyn, tc.crd, opts)
			took := time.Since(start)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("InstallCRD: %v, want the CRD served", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("InstallCRD: %v, want an error with %q", err, tc.want)
			case tc.fast && took >= timeout:
				t.Errorf("InstallCRD failed after %v, want at once (the CRD cannot be served)", took)
			}
			if err == nil && tc.existing == nil {
				if _, err := crds.Get(context.Background(), tc.crd.Name, metav1.GetOptions{}); err != nil {
					t.Errorf("the CRD was not created: %v", err)
				}
			}
			if notCreated := (*createError)(nil); errors.As(err, &notCreated) != (tc.name == "exists") {
				t.Errorf("InstallCRD's error %v: a createError %v, want one only when the CRD was not created", err, notCreated != nil)
			}
		})
	}
}
