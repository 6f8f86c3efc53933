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

package apply

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// applyTestCRD is the CRD of the namespaced kind Widget in example.com/v1.
func applyTestCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
			}},
		},
	}
}

// TestKindsOnlyInTable: the files that apply objects name no kind and
// import no typed API: kinds with a rule are in kinds.go only, so the
// scenario kinds of TestApplyScenarioKinds apply through no code of theirs.
func TestKindsOnlyInTable(t *testing.T) {
	kinds := regexp.MustCompile(`\b(Namespace|CustomResourceDefinition|PriorityClass|PodDisruptionBudget|Deployment|Service|Widget|ReplicaSet|StatefulSet|DaemonSet|Job|Pod)\b`)
	for _, file := range []string{"apply.go", "mapper.go", "order.go", "steps.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "k8s.io/api/") || strings.HasPrefix(p, "k8s.io/apiextensions-apiserver/") {
				found = append(found, "import "+p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && kinds.MatchString(lit.Value) {
				found = append(found, "literal "+lit.Value)
			}
			return true
		})
		if diff := cmp.Diff([]string(nil), found); diff != "" {
			t.Errorf("%s names kinds (-want +got):\n%s", file, diff)
		}
	}
}

func TestCRDCondition(t *testing.T) {
	crd := func(conds ...map[string]any) *unstructured.Unstructured {
		var list []any
		for _, c := range conds {
			list = append(list, c)
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
	}
	cond := func(typ, status string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": typ + " is " + status}
	}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    bool
		wantErr string
	}{
		{name: "no status", obj: &unstructured.Unstructured{Object: map[string]any{}}},
		{name: "names accepted only", obj: crd(cond("NamesAccepted", "True"))},
		{name: "established", obj: crd(cond("NamesAccepted", "True"), cond("Established", "True")), want: true},
		{name: "not established", obj: crd(cond("Established", "False"))},
		{name: "names refused", obj: crd(cond("NamesAccepted", "False")), wantErr: "names not accepted: NamesAccepted is False"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := crdCondition(tt.obj)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tt.want {
				t.Errorf("established = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestApplyCRD: Apply returns a CRD once it is Established and its kind
// maps; a CRD whose names are refused fails instead of waiting.
func TestApplyCRD(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, client := applyTestApplier(t)
	crd := applyTestCRD()
	crd.Name, crd.Spec.Group = "widgets.crd.example.com", "crd.example.com"
	applied, err := a.Apply(ctx, applyTestObject(t, crd))
	if err != nil {
		t.Fatal(err)
	}
	u, err := client.Resource(applied.Resource).Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if established, err := crdCondition(u); !established || err != nil {
		t.Errorf("after Apply: established %v (%v), want true", established, err)
	}
	// Straight from the mapper's cache, no retry.
	if _, err := restMapping(ctx, a.mapper, schema.GroupKind{Group: "crd.example.com", Kind: "Widget"}, "v1"); err != nil {
		t.Errorf("mapping Widget right after its CRD: %v", err)
	}

	// Same kind again in the group: refused.
	dup := applyTestCRD()
	dup.Name, dup.Spec.Group = "gadgets.crd.example.com", "crd.example.com"
	dup.Spec.Names.Plural, dup.Spec.Names.Singular = "gadgets", "gadget"
	_, err = a.Apply(ctx, applyTestObject(t, dup))
	if err == nil || !strings.Contains(err.Error(), "names not accepted") {
		t.Errorf("Apply of a CRD with a kind in use: got %v, want names not accepted", err)
	}
	if ctx.Err() != nil {
		t.Error("waited until the test's deadline")
	}
}
