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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// setNamespaces makes the plugin read namespace labels from namespaces only,
// as its informer would after they changed.
func setNamespaces(t *testing.T, pl *PlacementPolicy, namespaces ...*v1.Namespace) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, ns := range namespaces {
		if err := indexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	pl.namespaces = corelisters.NewNamespaceLister(indexer)
}

// signature is the pod's signature as the framework builds it from the
// plugin's fragments (frameworkImpl.SignPod): the JSON of a map keyed by
// fragment key, compared byte for byte by the batch.
func signature(t *testing.T, pl *PlacementPolicy, pod *v1.Pod) string {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	fragments, status := pl.SignPod(ctx, pod)
	if !status.IsSuccess() {
		t.Fatalf("SignPod(%s): %v", pod.Name, status)
	}
	sig := map[string]any{}
	for _, f := range fragments {
		sig[f.Key] = f.Value
	}
	b, err := json.Marshal(sig)
	if err != nil {
		t.Fatalf("SignPod(%s): fragments do not marshal: %v", pod.Name, err)
	}
	return string(b)
}

func ruleNames(t *testing.T, pl *PlacementPolicy, pod *v1.Pod) []string {
	t.Helper()
	s, err := pl.rulesFor(pod)
	if err != nil {
		t.Fatalf("rulesFor(%s): %v", pod.Name, err)
	}
	return s.names()
}

// TestSignatureAfterNamespaceRelabel signs pods the way the scheduling queue
// does, once when they are added, then relabels a namespace: pods whose
// rules differ now must not share a signature, or the batch would hand one
// the other's nodes.
func TestSignatureAfterNamespaceRelabel(t *testing.T) {
	preferEU := config.PlacementRule{Name: "prefer-eu-by-label", NamespaceSelector: selector("data-residency", "eu"),
		NodeSelector: inRegions("eu-west-1"), Action: config.PlacementPrefer, Weight: 10}
	dbByLabel := config.PlacementRule{Name: "db-by-label", NamespaceSelector: selector("data-residency", "eu"),
		PodSelector: selector("tier", "db"), NodeSelector: inRegions("eu-west-1"), Action: config.PlacementRequire}
	tests := []struct {
		name          string
		rules         []config.PlacementRule // nil: testRules
		signed, later []*v1.Namespace        // the namespaces when the pods are signed, and later
		a, b          *v1.Pod
	}{
		{
			name:   "a namespace loses the label of a Require rule",
			signed: []*v1.Namespace{namespace("team-a", "data-residency", "eu"), namespace("team-b", "data-residency", "eu")},
			later:  []*v1.Namespace{namespace("team-a", "data-residency", "eu"), namespace("team-b")},
			a:      st.MakePod().Name("a").Namespace("team-a").Obj(),
			b:      st.MakePod().Name("b").Namespace("team-b").Obj(),
		},
		{
			name:   "a namespace gains the label of a Require rule",
			signed: []*v1.Namespace{namespace("team-a"), namespace("team-b")},
			later:  []*v1.Namespace{namespace("team-a"), namespace("team-b", "data-residency", "eu")},
			a:      st.MakePod().Name("a").Namespace("team-a").Obj(),
			b:      st.MakePod().Name("b").Namespace("team-b").Obj(),
		},
		{
			name:   "a namespace gains the label of a Prefer rule",
			rules:  []config.PlacementRule{preferEU},
			signed: []*v1.Namespace{namespace("team-a"), namespace("team-b")},
			later:  []*v1.Namespace{namespace("team-a", "data-residency", "eu"), namespace("team-b")},
			a:      st.MakePod().Name("a").Namespace("team-a").Label("app", "web").Obj(),
			b:      st.MakePod().Name("b").Namespace("team-b").Label("app", "web").Obj(),
		},
		{
			name:   "a rule with both selectors",
			rules:  []config.PlacementRule{dbByLabel},
			signed: []*v1.Namespace{namespace("team-a", "data-residency", "eu"), namespace("team-b", "data-residency", "eu")},
			later:  []*v1.Namespace{namespace("team-a"), namespace("team-b", "data-residency", "eu")},
			a:      st.MakePod().Name("a").Namespace("team-a").Label("tier", "db").Obj(),
			b:      st.MakePod().Name("b").Namespace("team-b").Label("tier", "db").Obj(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := testArgs(nil)
			if tc.rules != nil {
				args.Rules = tc.rules
			}
			pl := newPlugin(t, args)
			setNamespaces(t, pl, tc.signed...)
			if diff := cmp.Diff(ruleNames(t, pl, tc.a), ruleNames(t, pl, tc.b)); diff != "" {
				t.Fatalf("the case wants the same rules at signing time (-a +b):\n%s", diff)
			}
			sigA, sigB := signature(t, pl, tc.a), signature(t, pl, tc.b)

			setNamespaces(t, pl, tc.later...)
			rulesA, rulesB := ruleNames(t, pl, tc.a), ruleNames(t, pl, tc.b)
			if cmp.Equal(rulesA, rulesB) {
				t.Fatalf("the case wants different rules after the relabel, both got %v", rulesA)
			}
			if sigA == sigB {
				t.Errorf("pods with rules %v and %v after the relabel share the signature %s", rulesA, rulesB, sigA)
			}
		})
	}
}

// TestSignatureKeepsBatching checks that pods which get the same rules
// whatever their namespaces' labels share a signature, so that the plugin
// does not cost the profile batching it could keep.
func TestSignatureKeepsBatching(t *testing.T) {
	byPod := []config.PlacementRule{
		{Name: "licensed", PodSelector: selector("license", "oracle"), NodeSelector: selector("licensed", "oracle"), Action: config.PlacementRequire},
		{Name: "batch-prefers-spot", PodSelector: selector("workload", "batch"), NodeSelector: selector("capacity", "spot"), Action: config.PlacementPrefer, Weight: 10},
		{Name: "db-by-label", NamespaceSelector: selector("data-residency", "eu"), PodSelector: selector("tier", "db"),
			NodeSelector: inRegions("eu-west-1"), Action: config.PlacementRequire},
	}
	tests := []struct {
		name  string
		rules []config.PlacementRule // nil: testRules
		a, b  *v1.Pod
	}{
		{
			name: "same namespace, labels no rule reads differ",
			a:    st.MakePod().Name("a").Namespace("analytics").Label("workload", "batch").Label("app", "x").Obj(),
			b:    st.MakePod().Name("b").Namespace("analytics").Label("workload", "batch").Label("app", "y").Obj(),
		},
		{
			name:  "other namespaces, rules by pod labels only",
			rules: byPod,
			a:     st.MakePod().Name("a").Namespace("default").Label("workload", "batch").Obj(),
			b:     st.MakePod().Name("b").Namespace("payments").Label("workload", "batch").Obj(),
		},
		{
			name:  "other namespaces, no rule can select the pods",
			rules: byPod,
			a:     st.MakePod().Name("a").Namespace("default").Label("app", "web").Obj(),
			b:     st.MakePod().Name("b").Namespace("analytics").Obj(),
		},
		{
			name: "DaemonSet pods of other namespaces are exempt",
			a:    st.MakePod().Name("a").Namespace("analytics").OwnerReference("ds", daemonSetKind).Obj(),
			b:    st.MakePod().Name("b").Namespace("default").OwnerReference("ds", daemonSetKind).Obj(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := testArgs(nil)
			if tc.rules != nil {
				args.Rules = tc.rules
			}
			pl := newPlugin(t, args, testNamespaces...)
			if diff := cmp.Diff(signature(t, pl, tc.a), signature(t, pl, tc.b)); diff != "" {
				t.Errorf("signatures differ (-a +b):\n%s", diff)
			}
		})
	}
}
