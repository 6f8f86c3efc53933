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

package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func pod(ns string, kv ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: map[string]string{}}}
	for i := 0; i < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	return p
}

func node(kv ...string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{}}}
	for i := 0; i < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

func testArgs() *config.PlacementPolicyArgs {
	return &config.PlacementPolicyArgs{
		IgnoreDaemonSetPods: true,
		ExcludedNamespaces:  []string{"kube-system"},
		Rules: []config.PlacementRule{
			{Name: "payments-eu", Namespaces: []string{"payments"}, NodeSelector: sel("region", "eu"), Action: config.PlacementRequire},
			{Name: "residency-by-label", NamespaceSelector: sel("residency", "eu"), PodSelector: sel("tier", "db"),
				NodeSelector: sel("region", "eu"), Action: config.PlacementRequire},
			{Name: "db-licensed", PodSelector: sel("tier", "db"), NodeSelector: sel("licensed", "true"), Action: config.PlacementRequire},
			{Name: "db-ssd", PodSelector: sel("tier", "db"), NodeSelector: sel("disk", "ssd"), Action: config.PlacementPrefer, Weight: 10},
			{Name: "db-fast", PodSelector: sel("tier", "db"), NodeSelector: sel("cpu", "fast"), Action: config.PlacementPrefer, Weight: 3},
			// Selects nothing: no pod carries the label.
			{Name: "nobody", PodSelector: sel("never", "x"), NodeSelector: sel("region", "mars"), Action: config.PlacementRequire},
		},
	}
}

func TestFor(t *testing.T) {
	rules, err := Compile(testArgs())
	if err != nil {
		t.Fatal(err)
	}
	dsPod := pod("payments", "tier", "db")
	dsPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: new(true)}}
	tests := []struct {
		name          string
		pod           *v1.Pod
		ns            labels.Set
		wantRequired  []string
		wantPreferred []string
	}{
		{name: "no rule", pod: pod("default", "app", "web")},
		{name: "namespace", pod: pod("payments"), wantRequired: []string{"payments-eu"}},
		{name: "pod labels", pod: pod("default", "tier", "db"), wantRequired: []string{"db-licensed"}, wantPreferred: []string{"db-ssd", "db-fast"}},
		{name: "namespace labels", pod: pod("default", "tier", "db"), ns: labels.Set{"residency": "eu"},
			wantRequired: []string{"residency-by-label", "db-licensed"}, wantPreferred: []string{"db-ssd", "db-fast"}},
		{name: "namespace labels without the pod's", pod: pod("default"), ns: labels.Set{"residency": "eu"}},
		{name: "excluded namespace", pod: pod("kube-system", "tier", "db")},
		{name: "DaemonSet pod", pod: dsPod},
	}
	names := func(rs []*Rule) []string {
		var n []string
		for _, r := range rs {
			n = append(n, r.Name())
			if rules.At(r.Index()) != r {
				t.Errorf("rule %s: Index %d is not its place in Rules", r.Name(), r.Index())
			}
		}
		return n
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := rules.For(tc.pod, tc.ns)
			if diff := cmp.Diff(tc.wantRequired, names(p.Required)); diff != "" {
				t.Errorf("Required (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPreferred, names(p.Preferred)); diff != "" {
				t.Errorf("Preferred (-want +got):\n%s", diff)
			}
			if got, want := p.Empty(), len(tc.wantRequired)+len(tc.wantPreferred) == 0; got != want {
				t.Errorf("Empty = %v, want %v", got, want)
			}
		})
	}
	args := testArgs()
	args.IgnoreDaemonSetPods = false
	if rules, err = Compile(args); err != nil {
		t.Fatal(err)
	}
	if got, want := rules.For(dsPod, nil).Names(), []string{"db-fast", "db-licensed", "db-ssd", "payments-eu"}; !cmp.Equal(got, want) {
		t.Errorf("with IgnoreDaemonSetPods off, DaemonSet pod rules = %v, want %v", got, want)
	}
}

func TestAdmitsAndPreference(t *testing.T) {
	rules, err := Compile(testArgs())
	if err != nil {
		t.Fatal(err)
	}
	db := pod("payments", "tier", "db")
	tests := []struct {
		name     string
		pod      *v1.Pod
		node     *v1.Node
		wantOK   bool
		wantRule string
		wantPref int64
	}{
		{name: "matches every Require rule", pod: db, node: node("region", "eu", "licensed", "true"), wantOK: true},
		{name: "names the first rule it fails", pod: db, node: node("region", "us"), wantRule: "payments-eu"},
		{name: "names a later rule", pod: db, node: node("region", "eu"), wantRule: "db-licensed"},
		{name: "sums the Prefer weights", pod: db, node: node("region", "eu", "licensed", "true", "disk", "ssd", "cpu", "fast"), wantOK: true, wantPref: 13},
		{name: "one Prefer rule", pod: db, node: node("disk", "ssd"), wantRule: "payments-eu", wantPref: 10},
		{name: "a rule that selects nothing admits", pod: pod("default", "app", "web"), node: node("region", "us"), wantOK: true},
		{name: "an exempt pod is admitted anywhere", pod: pod("kube-system", "tier", "db"), node: node(), wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := rules.For(tc.pod, nil)
			ok, rule := p.Admits(tc.node)
			if ok != tc.wantOK || rule != tc.wantRule {
				t.Errorf("Admits = %v, %q; want %v, %q", ok, rule, tc.wantOK, tc.wantRule)
			}
			if got := p.Preference(tc.node); got != tc.wantPref {
				t.Errorf("Preference = %d, want %d", got, tc.wantPref)
			}
		})
	}
}

func TestCompile(t *testing.T) {
	rules, err := Compile(testArgs())
	if err != nil {
		t.Fatal(err)
	}
	if got := rules.Len(); got != 6 {
		t.Errorf("Len = %d, want 6", got)
	}
	if !rules.NeedsNamespaceLabels() {
		t.Error("NeedsNamespaceLabels = false with a namespaceSelector rule")
	}
	args := testArgs()
	args.Rules = args.Rules[2:]
	if rules, err = Compile(args); err != nil {
		t.Fatal(err)
	}
	if rules.NeedsNamespaceLabels() || rules.Open() {
		t.Errorf("NeedsNamespaceLabels = %v, Open = %v; want false, false", rules.NeedsNamespaceLabels(), rules.Open())
	}
	args.Rules[0].PodSelector.MatchLabels = map[string]string{"bad key!": "x"}
	if _, err := Compile(args); err == nil {
		t.Error("Compile accepted an invalid podSelector")
	}
}
