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

package placementpolicy

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func expr(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// TestGate checks the gate on every kind of selector: it must pass every pod
// a rule selects (under any namespace labels), and stop the pods no rule
// can select, or it saves nothing.
func TestGate(t *testing.T) {
	rule := func(name string, mutate func(*config.PlacementRule)) config.PlacementRule {
		r := config.PlacementRule{Name: name, NodeSelector: selector("n", "x"), Action: config.PlacementRequire}
		mutate(&r)
		return r
	}
	pods := []*v1.Pod{
		st.MakePod().Name("plain").Namespace("default").Obj(),
		st.MakePod().Name("web").Namespace("default").Label("app", "web").Obj(),
		st.MakePod().Name("db").Namespace("default").Label("tier", "db").Obj(),
		st.MakePod().Name("cache").Namespace("default").Label("tier", "cache").Obj(),
		st.MakePod().Name("payments").Namespace("payments").Obj(),
		st.MakePod().Name("gpu").Namespace("ml").Label("accelerator", "gpu").Label("gen", "5").Obj(),
		// The lengths of payments and tier: the masks pass it, the lists stop it.
		st.MakePod().Name("same-length").Namespace("paymentx").Label("tiex", "db").Obj(),
	}
	nsLabels := []labels.Set{nil, {"data-residency": "eu"}}
	// many lists more namespaces and keys than a linear scan handles.
	var many []config.PlacementRule
	for i := range 8 + 2 { // match.shortList + 2
		many = append(many,
			rule(fmt.Sprintf("ns-%d", i), func(r *config.PlacementRule) { r.Namespaces = []string{fmt.Sprintf("team-%d", i)} }),
			rule(fmt.Sprintf("key-%d", i), func(r *config.PlacementRule) { r.PodSelector = selector(fmt.Sprintf("key-%d", i), "x") }))
	}
	many = append(many, rule("payments", func(r *config.PlacementRule) { r.Namespaces = []string{"payments"} }),
		rule("tier", func(r *config.PlacementRule) { r.PodSelector = selector("tier", "db") }))
	tests := []struct {
		name  string
		rules []config.PlacementRule
		open  bool
		stops []string // the pods the gate must stop
	}{
		{name: "no rules", stops: []string{"plain", "web", "db", "cache", "payments", "gpu", "same-length"}},
		{name: "the issue's rules", rules: testRules(), open: true},
		{
			name: "namespaces and matchLabels",
			rules: []config.PlacementRule{
				rule("payments", func(r *config.PlacementRule) { r.Namespaces = []string{"payments"} }),
				rule("db", func(r *config.PlacementRule) { r.PodSelector = selector("tier", "db") }),
			},
			stops: []string{"plain", "web", "gpu", "same-length"},
		},
		{
			name: "operators that need the key",
			rules: []config.PlacementRule{
				rule("in", func(r *config.PlacementRule) { r.PodSelector = expr("tier", metav1.LabelSelectorOpIn, "db") }),
				rule("exists", func(r *config.PlacementRule) { r.PodSelector = expr("accelerator", metav1.LabelSelectorOpExists) }),
			},
			stops: []string{"plain", "web", "payments", "same-length"},
		},
		{
			name:  "NotIn matches pods without the key",
			rules: []config.PlacementRule{rule("not-in", func(r *config.PlacementRule) { r.PodSelector = expr("tier", metav1.LabelSelectorOpNotIn, "db") })},
			open:  true,
		},
		{
			name: "DoesNotExist matches pods without the key",
			rules: []config.PlacementRule{rule("no-gpu", func(r *config.PlacementRule) {
				r.PodSelector = expr("accelerator", metav1.LabelSelectorOpDoesNotExist)
			})},
			open: true,
		},
		{
			name: "a key-free requirement next to one that needs a key",
			rules: []config.PlacementRule{rule("both", func(r *config.PlacementRule) {
				r.PodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: metav1.LabelSelectorOpDoesNotExist}}}
			})},
			stops: []string{"plain", "web", "payments", "gpu", "same-length"},
		},
		{name: "an empty podSelector selects every pod", rules: []config.PlacementRule{rule("all", func(r *config.PlacementRule) { r.PodSelector = &metav1.LabelSelector{} })}, open: true},
		{
			name: "an open rule next to a one-key rule",
			rules: []config.PlacementRule{
				rule("db", func(r *config.PlacementRule) { r.PodSelector = selector("tier", "db") }),
				rule("all", func(r *config.PlacementRule) { r.PodSelector = &metav1.LabelSelector{} }),
			},
			open: true,
		},
		{
			name:  "a namespaceSelector alone may select any pod",
			rules: []config.PlacementRule{rule("by-label", func(r *config.PlacementRule) { r.NamespaceSelector = selector("data-residency", "eu") })},
			open:  true,
		},
		{
			name: "a namespaceSelector with a podSelector is gated by the pod's labels",
			rules: []config.PlacementRule{rule("db-by-label", func(r *config.PlacementRule) {
				r.NamespaceSelector = selector("data-residency", "eu")
				r.PodSelector = selector("tier", "db")
			})},
			stops: []string{"plain", "web", "payments", "gpu", "same-length"},
		},
		{name: "many namespaces and keys: sets", rules: many, stops: []string{"plain", "web", "gpu", "same-length"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, testArgs(func(a *config.PlacementPolicyArgs) { a.Rules = tc.rules }), testNamespaces...)
			if pl.rules.Open() != tc.open {
				t.Errorf("open = %v, want %v", pl.rules.Open(), tc.open)
			}
			var stopped []string
			for _, pod := range pods {
				if pl.rules.MayApply(pod) {
					continue
				}
				stopped = append(stopped, pod.Name)
				for _, ns := range nsLabels {
					if s := pl.rulesWith(pod, ns); !s.empty() {
						t.Errorf("the gate stops pod %s, to which rules %v apply under namespace labels %v", pod.Name, s, ns)
					}
				}
			}
			if diff := cmp.Diff(tc.stops, stopped); diff != "" {
				t.Errorf("pods the gate stops (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPreScoreAfterAnotherPod checks that PreScore decides for the pod it
// is given, whatever pod PreFilter saw last.
func TestPreScoreAfterAnotherPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := newPlugin(t, testArgs(func(a *config.PlacementPolicyArgs) {
		a.Rules = []config.PlacementRule{{Name: "batch-prefers-spot", PodSelector: selector("workload", "batch"),
			NodeSelector: selector("capacity", "spot"), Action: config.PlacementPrefer, Weight: 10}}
	}))
	plain := st.MakePod().Name("plain").Namespace("default").Obj()
	batch := st.MakePod().Name("batch").Namespace("default").Label("workload", "batch").Obj()
	tests := []struct {
		name     string
		filtered *v1.Pod // the pod PreFilter saw last
		scored   *v1.Pod
		wantSkip bool
	}{
		{name: "the pod the gate stopped", filtered: plain, scored: plain, wantSkip: true},
		{name: "another pod after a stopped one", filtered: plain, scored: batch, wantSkip: false},
		{name: "a stopped pod after one with rules", filtered: batch, scored: plain, wantSkip: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl.PreFilter(ctx, framework.NewCycleState(), plain, nil)
			state := framework.NewCycleState()
			pl.PreFilter(ctx, state, tc.filtered, nil)
			if got := pl.PreScore(ctx, state, tc.scored, nil).IsSkip(); got != tc.wantSkip {
				t.Errorf("PreScore(%s) skipped = %v, want %v", tc.scored.Name, got, tc.wantSkip)
			}
		})
	}
}
