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
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

func TestNewCommandFlags(t *testing.T) {
	cmd := newCommand()
	if cmd.Use != "kube-scheduler" {
		t.Errorf("command Use = %q, want kube-scheduler", cmd.Use)
	}
	for _, name := range []string{"version", "config", "master", "kubeconfig", "leader-elect", "feature-gates", "v"} {
		t.Run(name, func(t *testing.T) {
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("flag --%s is missing", name)
			}
		})
	}
}

// outOfTreeRegistry applies outOfTreePlugins to an empty registry, as Setup does.
func outOfTreeRegistry(t *testing.T) frameworkruntime.Registry {
	t.Helper()
	registry := frameworkruntime.Registry{}
	for _, option := range outOfTreePlugins() {
		if err := option(registry); err != nil {
			t.Fatalf("applying out-of-tree plugin option: %v", err)
		}
	}
	return registry
}

// TestOutOfTreePlugins checks that the binary registers exactly the
// plugins of pkg/plugins, each with its factory.
func TestOutOfTreePlugins(t *testing.T) {
	registry := outOfTreeRegistry(t)
	want := map[string]uintptr{}
	for _, p := range plugins.All() {
		want[p.Name] = reflect.ValueOf(p.Factory).Pointer()
	}
	got := map[string]uintptr{}
	for name, factory := range registry {
		got[name] = reflect.ValueOf(factory).Pointer()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("out-of-tree plugin name -> factory (-pkg/plugins, +binary):\n%s", diff)
	}

	// The scheduler merges the out-of-tree registry into the in-tree one and
	// fails on a name that is taken.
	inTree := frameworkplugins.NewInTreeRegistry()
	if err := inTree.Merge(registry); err != nil {
		t.Errorf("merging the out-of-tree plugins into the in-tree registry: %v", err)
	}
}
