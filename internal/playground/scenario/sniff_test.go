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

package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNotAScenario: a Kubernetes object given as a scenario (or as its
// base) is named by its kind, not reported as every field it has.
func TestNotAScenario(t *testing.T) {
	const config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: custom-scheduler}]\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, file, data, want string }{
		{"a scheduler config", "c.yaml", config,
			"c.yaml is a KubeSchedulerConfiguration (it has kind: KubeSchedulerConfiguration), not a scenario; pass it as --config"},
		{"another object", "d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
			"d.yaml is a Deployment (it has kind: Deployment), not a scenario; a scenario lists Kubernetes objects under objects:"},
		{"a scheduler config as the base", filepath.Join(dir, "s.yaml"), "base: config.yaml\nnodes: [{name: a}]\n",
			filepath.Join(dir, "config.yaml") + " is a KubeSchedulerConfiguration (it has kind: KubeSchedulerConfiguration), not a scenario; pass it as --config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePlan(tc.file, []byte(tc.data), nil)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		data     string
		want     Sniffed
		ok       bool
		scenario bool
		has      string
	}{
		{"nodes: []\nobjects: []\nsteps: []\n", Sniffed{ScenarioFields: []string{"nodes", "objects", "steps"}}, true, true, "nodes:, objects: and steps:"},
		{"kind: Pod\nexpect: []\n", Sniffed{Kind: "Pod", ScenarioFields: []string{"expect"}}, true, false, "expect:"},
		{"- a\n", Sniffed{}, false, false, ""},
		{"", Sniffed{}, false, false, ""},
	}
	for _, tc := range tests {
		got, ok := Sniff([]byte(tc.data))
		if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.ok {
			t.Errorf("Sniff(%q): ok %v, want %v; (-want +got):\n%s", tc.data, ok, tc.ok, diff)
		}
		if got.IsScenario() != tc.scenario || got.Has() != tc.has {
			t.Errorf("Sniff(%q): IsScenario %v, Has %q; want %v, %q", tc.data, got.IsScenario(), got.Has(), tc.scenario, tc.has)
		}
	}
}
