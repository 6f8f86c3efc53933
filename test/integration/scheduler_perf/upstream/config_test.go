//go:build !kube1.36 && !kube1.35

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

package upstream

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"
)

// defaultConfig is what the harness runs a test case without a
// schedulerConfigPath with: the default profile, defaulted on load.
const defaultConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
`

// withProfile writes dir's performance-config.yaml to out with every test
// case's scheduler config replaced by its profiles edited by edit: the
// config the test case names, or the default one. It returns the new file.
// Paths inside the test cases other than the scheduler config stay
// relative to dir, where the harness must run.
func withProfile(tb testing.TB, dir, out string, edit func(*configv1.KubeSchedulerProfile)) string {
	tb.Helper()
	src := filepath.Join(dir, "performance-config.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	// A yaml.Node keeps every other value as upstream wrote it.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		tb.Fatalf("%s: %v", src, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
		tb.Fatalf("%s: not a list of test cases", src)
	}
	for i, tc := range doc.Content[0].Content {
		name := field(tc, "name")
		if name == nil || tc.Kind != yaml.MappingNode {
			tb.Fatalf("%s: test case %d has no name", src, i)
		}
		base := []byte(defaultConfig)
		if path := field(tc, "schedulerConfigPath"); path != nil {
			if base, err = os.ReadFile(filepath.Join(dir, path.Value)); err != nil {
				tb.Fatalf("%s: test case %s: %v", src, name.Value, err)
			}
		}
		cfg, err := editConfig(base, edit)
		if err != nil {
			tb.Fatalf("%s: test case %s: scheduler config: %v", src, name.Value, err)
		}
		file := filepath.Join(out, name.Value+"-scheduler-config.yaml")
		if err := os.WriteFile(file, cfg, 0o644); err != nil {
			tb.Fatal(err)
		}
		setField(tc, "schedulerConfigPath", file)
		// Thresholds are floors of throughput set for upstream's CI
		// machines, which a 2-core machine misses with any profile; the
		// figures are compared between profiles instead.
		if workloads := field(tc, "workloads"); workloads != nil {
			for _, w := range workloads.Content {
				deleteField(w, "threshold")
			}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&doc); err != nil {
		tb.Fatal(err)
	}
	file := filepath.Join(out, "performance-config.yaml")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// editConfig applies edit to every profile of a v1 scheduler config.
func editConfig(data []byte, edit func(*configv1.KubeSchedulerProfile)) ([]byte, error) {
	var cfg configv1.KubeSchedulerConfiguration
	if err := sigsyaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, err
	}
	if cfg.APIVersion != configv1.SchemeGroupVersion.String() || cfg.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("%s %s is not a %s KubeSchedulerConfiguration", cfg.APIVersion, cfg.Kind, configv1.SchemeGroupVersion)
	}
	if len(cfg.Profiles) == 0 {
		return nil, fmt.Errorf("no profiles: the harness would run the default one, which edits cannot reach")
	}
	for i := range cfg.Profiles {
		if edit != nil {
			edit(&cfg.Profiles[i])
		}
	}
	return sigsyaml.Marshal(&cfg)
}

func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func deleteField(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

func setField(m *yaml.Node, key, value string) {
	if v := field(m, key); v != nil {
		v.SetString(value)
		return
	}
	var k, v yaml.Node
	k.SetString(key)
	v.SetString(value)
	m.Content = append(m.Content, &k, &v)
}

// enable returns an edit that adds plugins to a profile at every
// extension point they implement, with their default args.
func enable(plugins ...configv1.Plugin) func(*configv1.KubeSchedulerProfile) {
	return func(p *configv1.KubeSchedulerProfile) {
		if p.Plugins == nil {
			p.Plugins = &configv1.Plugins{}
		}
		p.Plugins.MultiPoint.Enabled = append(p.Plugins.MultiPoint.Enabled, plugins...)
	}
}

func plugin(name string, weight int32) configv1.Plugin {
	p := configv1.Plugin{Name: name}
	if weight > 0 {
		p.Weight = ptr.To(weight)
	}
	return p
}

// names lists profiles' names for messages.
func names(ps []profile) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.name)
	}
	return strings.Join(s, ", ")
}

// TestWithProfile checks the rewritten test cases of two folders: batching's
// have scheduler configs of their own, which keep their plugin args and
// gain ours; misc's have none and get the default profile with ours. No
// workload keeps a throughput threshold (misc has some).
func TestWithProfile(t *testing.T) {
	type testCase struct {
		Name                string `json:"name"`
		SchedulerConfigPath string `json:"schedulerConfigPath"`
		Workloads           []map[string]any
	}
	var cases []testCase
	for _, folder := range []string{"batching", "misc"} {
		file := withProfile(t, filepath.Join(moduleDir(t), folder), t.TempDir(), enable(plugin("NodeLessPods", 1)))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var folderCases []testCase
		if err := sigsyaml.Unmarshal(data, &folderCases); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, folderCases...)
	}
	var own, plain int
	for _, tc := range cases {
		for _, w := range tc.Workloads {
			if _, ok := w["threshold"]; ok {
				t.Errorf("%s/%v kept its threshold", tc.Name, w["name"])
			}
		}
		cfgData, err := os.ReadFile(tc.SchedulerConfigPath)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		var cfg configv1.KubeSchedulerConfiguration
		if err := sigsyaml.UnmarshalStrict(cfgData, &cfg); err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		p := cfg.Profiles[0]
		if p.Plugins == nil || len(p.Plugins.MultiPoint.Enabled) != 1 || p.Plugins.MultiPoint.Enabled[0].Name != "NodeLessPods" {
			t.Errorf("%s: profile plugins %+v, want NodeLessPods added", tc.Name, p.Plugins)
		}
		if len(p.PluginConfig) > 0 {
			own++
			if p.PluginConfig[0].Name != "PodTopologySpread" {
				t.Errorf("%s: plugin config %s, want upstream's PodTopologySpread args kept", tc.Name, p.PluginConfig[0].Name)
			}
		} else {
			plain++
		}
	}
	if own == 0 || plain == 0 {
		t.Errorf("%d test cases with a scheduler config of their own, %d without; the test needs both", own, plain)
	}
}
