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
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestCELSelects evaluates CELSelects' expression for each selector on
// label sets (none, empty, and some) and compares with what the selector
// itself matches.
func TestCELSelects(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
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
	for name, sel := range selectors {
		expr := CELSelects("object.metadata.labels", sel)
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %s: %v", name, expr, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		want := labels.Everything()
		if sel != nil {
			if want, err = metav1.LabelSelectorAsSelector(sel); err != nil {
				t.Fatal(err)
			}
		}
		for _, set := range labelSets {
			meta := map[string]any{}
			if set != nil {
				meta["labels"] = set
			}
			out, _, err := prg.Eval(map[string]any{"object": map[string]any{"metadata": meta}})
			if err != nil {
				t.Fatalf("%s on %v: %s: %v", name, set, expr, err)
			}
			if got := out.Value() == true; got != want.Matches(labels.Set(set)) {
				t.Errorf("%s on labels %v: %s is %v, the selector says %v", name, set, expr, got, !got)
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
