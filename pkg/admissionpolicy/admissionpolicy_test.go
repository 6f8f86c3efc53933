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
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestCELSelects evaluates CELSelects' expression, as the API server's
// admission CEL does, for each selector on the labels of a pod and of its
// namespace (none, empty, and some), and compares with what the selector
// itself matches.
func TestCELSelects(t *testing.T) {
	compiler := plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	req := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	selectors := map[string]*metav1.LabelSelector{
		"nil":          nil,
		"empty":        {},
		"matchLabels":  {MatchLabels: map[string]string{"app": "web", "tier": "front"}},
		"In":           {MatchExpressions: []metav1.LabelSelectorRequirement{req("app", metav1.LabelSelectorOpIn, "web", "api")}},
		"NotIn":        {MatchExpressions: []metav1.LabelSelectorRequirement{req("app", metav1.LabelSelectorOpNotIn, "web")}},
		"Exists":       {MatchExpressions: []metav1.LabelSelectorRequirement{req("team", metav1.LabelSelectorOpExists)}},
		"DoesNotExist": {MatchExpressions: []metav1.LabelSelectorRequirement{req("team", metav1.LabelSelectorOpDoesNotExist)}},
		"all of them": {MatchLabels: map[string]string{"tier": "front"}, MatchExpressions: []metav1.LabelSelectorRequirement{
			req("app", metav1.LabelSelectorOpNotIn, "db"), req("team", metav1.LabelSelectorOpExists), req("x/y", metav1.LabelSelectorOpDoesNotExist)}},
	}
	labelSets := []map[string]string{
		nil, {},
		{"app": "web"}, {"app": "db"}, {"app": "api", "team": "a"},
		{"app": "web", "tier": "front", "team": "a"}, {"tier": "front", "team": "b", "x/y": ""},
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for name, sel := range selectors {
		want := labels.Everything()
		if sel != nil {
			var err error
			if want, err = metav1.LabelSelectorAsSelector(sel); err != nil {
				t.Fatal(err)
			}
		}
		for _, field := range []string{"object.metadata.labels", "namespaceObject.metadata.labels"} {
			expr := CELSelects(field, sel)
			eval := compiler.CompileCondition([]plugincel.ExpressionAccessor{&matchconditions.MatchCondition{Name: "m", Expression: expr}},
				plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions)
			if errs := eval.CompilationErrors(); len(errs) > 0 {
				t.Fatalf("%s: %s: %v", name, expr, errs)
			}
			for _, set := range labelSets {
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
				ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
				if field == "object.metadata.labels" {
					pod.Labels = set
				} else {
					ns.Labels = set
				}
				attrs := admission.NewAttributesRecord(pod, nil, gvk, "ns", "p", gvr, "", admission.Create, &metav1.CreateOptions{}, false, nil)
				versioned, err := admission.NewVersionedAttributes(attrs, gvk, admission.NewObjectInterfacesFromScheme(scheme.Scheme))
				if err != nil {
					t.Fatal(err)
				}
				results, _, err := eval.ForInput(context.Background(), versioned,
					plugincel.CreateAdmissionRequest(attrs, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk)),
					plugincel.OptionalVariableBindings{}, ns, celconfig.RuntimeCELCostBudget)
				if err == nil && results[0].Error != nil {
					err = results[0].Error
				}
				if err != nil {
					t.Fatalf("%s on %v: %s: %v", name, set, expr, err)
				}
				if got := results[0].EvalResult.Value() == true; got != want.Matches(labels.Set(set)) {
					t.Errorf("%s on labels %v: %s is %v, the selector says %v", name, set, expr, got, !got)
				}
			}
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, tt := range []struct {
		flags RenderFlags
		want  string
	}{
		{RenderFlags{KubeVersion: "1.36", FailurePolicy: "Never"}, `--failure-policy "Never": must be Ignore or Fail`},
		{RenderFlags{KubeVersion: "1.34", FailurePolicy: "Ignore"}, `--kube-version "1.34": Kubernetes 1.34: renders for 1.35 to`},
		{RenderFlags{KubeVersion: "latest", FailurePolicy: "Ignore"}, `--kube-version "latest": want a Kubernetes version such as 1.36 or v1.36.3`},
		{RenderFlags{KubeVersion: "v1.35.2", FailurePolicy: "Fail"}, ""},
	} {
		_, _, err := tt.flags.Parse()
		if (err == nil) != (tt.want == "") || (err != nil && !strings.HasPrefix(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.flags, err, tt.want)
		}
	}
	if _, err := CheckFailurePolicy("Sometimes"); err == nil || err.Error() != `failure policy "Sometimes": must be Ignore or Fail` {
		t.Errorf("CheckFailurePolicy: %v", err)
	}
	if fp, err := CheckFailurePolicy(""); fp != Ignore || err != nil {
		t.Errorf("CheckFailurePolicy(\"\") = %s, %v; want the default Ignore", fp, err)
	}
}
