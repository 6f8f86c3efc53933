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

package plugins

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func funcPointer(f any) uintptr { return reflect.ValueOf(f).Pointer() }

// TestAll checks each entry against itself: a name used once, a type that
// answers to that name, and a v1 args kind the scheduler's scheme decodes.
func TestAll(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name == "" || seen[p.Name] {
				t.Errorf("name %q is empty or taken by an earlier entry", p.Name)
			}
			seen[p.Name] = true
			if p.Factory == nil || p.Type == nil {
				t.Fatalf("entry %q has no Factory or no Type", p.Name)
			}
			if got := p.Type.Name(); got != p.Name {
				t.Errorf("Type's Name() = %q, want %q", got, p.Name)
			}
			gvk := configv1.SchemeGroupVersion.WithKind(p.Name + "Args")
			if recognized := scheme.Scheme.Recognizes(gvk); p.NoArgs && recognized {
				t.Errorf("the scheduler's config scheme knows %s, but the entry says NoArgs", gvk)
			} else if !p.NoArgs && !recognized {
				t.Errorf("the scheduler's config scheme does not know %s: profiles could not configure %s", gvk, p.Name)
			}
			if len(p.ExtensionPoints()) == 0 {
				t.Errorf("Type implements no extension point")
			}
		})
	}
}

// TestDerived checks that Names, Options and Registry hold exactly All's
// plugins with their factories, and that they merge into the in-tree
// registry as the scheduler merges them (a taken name fails there).
func TestDerived(t *testing.T) {
	want := map[string]uintptr{}
	for _, p := range All() {
		want[p.Name] = funcPointer(p.Factory)
	}
	fromOptions := frameworkruntime.Registry{}
	for _, option := range Options() {
		if err := option(fromOptions); err != nil {
			t.Fatalf("applying an option: %v", err)
		}
	}
	for name, registry := range map[string]frameworkruntime.Registry{"Options": fromOptions, "Registry": Registry()} {
		t.Run(name, func(t *testing.T) {
			got := map[string]uintptr{}
			for n, f := range registry {
				got[n] = funcPointer(f)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plugin name -> factory (-All, +%s):\n%s", name, diff)
			}
			if err := frameworkplugins.NewInTreeRegistry().Merge(registry); err != nil {
				t.Errorf("merging into the in-tree registry: %v", err)
			}
		})
	}
	names := Names()
	if diff := cmp.Diff(slices.Sorted(func(yield func(string) bool) {
		for n := range want {
			if !yield(n) {
				return
			}
		}
	}), slices.Sorted(slices.Values(names))); diff != "" {
		t.Errorf("Names() (-All, +Names):\n%s", diff)
	}
}

// Types that implement chosen extension points, for TestExtensionPoints
// (each declares Name, which its embedded interfaces would make ambiguous).
type (
	base        struct{}
	filterScore struct {
		fwk.FilterPlugin
		fwk.ScorePlugin
	}
	normalized  struct{ filterScore }
	reserveBind struct {
		fwk.ReservePlugin
		fwk.BindPlugin
	}
)

func (base) Name() string        { return "base" }
func (filterScore) Name() string { return "filterScore" }
func (reserveBind) Name() string { return "reserveBind" }

func (normalized) NormalizeScore(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeScoreList) *fwk.Status {
	return nil
}

func TestExtensionPoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  fwk.Plugin
		want []string
	}{
		{name: "none", typ: base{}},
		{name: "filter and score", typ: filterScore{}, want: []string{"Filter", "Score"}},
		{name: "normalized", typ: normalized{}, want: []string{"Filter", "Score", "NormalizeScore"}},
		{name: "reserve and bind", typ: reserveBind{}, want: []string{"Reserve", "Bind"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Plugin{Type: tc.typ}.ExtensionPoints()); diff != "" {
				t.Errorf("ExtensionPoints() (-want, +got):\n%s", diff)
			}
		})
	}
}
