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

// Package testconfig builds KubeSchedulerConfigurations for tests from the
// v1 Go types and writes them as the YAML file kube-scheduler --config reads,
// so that no test writes indented YAML by hand. Tests that feed malformed
// YAML on purpose keep their text.
package testconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// New returns a config that reaches the API server through kubeconfig (a
// path; empty leaves it to --master), with leader election off, holding
// profiles.
func New(kubeconfig string, profiles ...configv1.KubeSchedulerProfile) *configv1.KubeSchedulerConfiguration {
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: profiles}
	cfg.ClientConnection.Kubeconfig = kubeconfig
	cfg.LeaderElection.LeaderElect = ptr.To(false)
	return cfg
}

// Plugins returns a plugin set that enables each name, at weight when
// weight > 0 (a weight only counts at score and multiPoint).
func Plugins(weight int32, names ...string) configv1.PluginSet {
	var set configv1.PluginSet
	for _, name := range names {
		p := configv1.Plugin{Name: name}
		if weight > 0 {
			p.Weight = ptr.To(weight)
		}
		set.Enabled = append(set.Enabled, p)
	}
	return set
}

// Args returns a pluginConfig entry for plugin with args, a v1 args object
// (e.g. *apis/config/v1.NodeLessPodsArgs) or an in-tree one.
func Args(plugin string, args runtime.Object) configv1.PluginConfig {
	return configv1.PluginConfig{Name: plugin, Args: runtime.RawExtension{Object: args}}
}

// RawArgs returns a pluginConfig entry whose args are the JSON text raw, for
// args the typed objects cannot express (unknown fields, wrong types).
func RawArgs(plugin, raw string) configv1.PluginConfig {
	return configv1.PluginConfig{Name: plugin, Args: runtime.RawExtension{Raw: []byte(raw)}}
}

// Marshal returns cfg as YAML with its apiVersion and kind. It fails on
// RawArgs that are not JSON.
func Marshal(cfg *configv1.KubeSchedulerConfiguration) ([]byte, error) {
	for _, pc := range cfg.Profiles {
		for _, c := range pc.PluginConfig {
			if c.Args.Raw != nil && !json.Valid(c.Args.Raw) {
				return nil, fmt.Errorf("pluginConfig %s: args are not JSON: %s", c.Name, c.Args.Raw)
			}
		}
	}
	out := *cfg
	out.APIVersion = configv1.SchemeGroupVersion.String()
	out.Kind = "KubeSchedulerConfiguration"
	return yaml.Marshal(&out)
}

// Write marshals cfg into a file in a fresh temporary directory of t and
// returns its path.
func Write(t testing.TB, cfg *configv1.KubeSchedulerConfiguration) string {
	t.Helper()
	data, err := Marshal(cfg)
	if err != nil {
		t.Fatalf("marshalling the scheduler config: %v", err)
	}
	path := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Unmarshal reads a config file's YAML (a shipped one, to run it with a
// test's kubeconfig) into the v1 types, refusing unknown fields and any
// other apiVersion or kind. Plugin args stay raw: Marshal writes them back
// as they were.
func Unmarshal(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	var cfg configv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, err
	}
	if want := configv1.SchemeGroupVersion.String(); cfg.APIVersion != want || cfg.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s, KubeSchedulerConfiguration", cfg.APIVersion, cfg.Kind, want)
	}
	return &cfg, nil
}
