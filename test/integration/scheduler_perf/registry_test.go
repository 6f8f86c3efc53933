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

package schedulerperf

import (
	"os"
	"slices"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

// perfTestCase is the part of a performance-config.yaml test case that
// TestPerfConfigCoversPlugins reads.
type perfTestCase struct {
	Name                   string `json:"name"`
	SchedulerConfigPath    string `json:"schedulerConfigPath"`
	MetricsCollectorConfig struct {
		Metrics map[string][]struct {
			Label  string   `json:"label"`
			Values []string `json:"values"`
		} `json:"metrics"`
	} `json:"metricsCollectorConfig"`
}

// enabledPlugins returns the plugins a scheduler config's profiles enable at
// any extension point.
func enabledPlugins(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg configv1.KubeSchedulerConfiguration
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	enabled := map[string]bool{}
	for _, profile := range cfg.Profiles {
		if profile.Plugins == nil {
			continue
		}
		p := profile.Plugins
		for _, set := range []configv1.PluginSet{p.PreEnqueue, p.QueueSort, p.PreFilter, p.Filter, p.PostFilter,
			p.PreScore, p.Score, p.Reserve, p.Permit, p.PreBind, p.Bind, p.PostBind, p.MultiPoint} {
			for _, plugin := range set.Enabled {
				enabled[plugin.Name] = true
			}
		}
	}
	return enabled
}

// TestPerfConfigCoversPlugins checks performance-config.yaml against the
// registry: every plugin has its execution time collected and is enabled by
// the profile of at least one test case.
func TestPerfConfigCoversPlugins(t *testing.T) {
	data, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []perfTestCase
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", configFile, err)
	}
	for _, name := range plugins.Names() {
		t.Run(name, func(t *testing.T) {
			var collected bool
			var enabledBy []string
			for _, tc := range cases {
				for _, m := range tc.MetricsCollectorConfig.Metrics["scheduler_plugin_execution_duration_seconds"] {
					if m.Label == "plugin" && slices.Contains(m.Values, name) {
						collected = true
					}
				}
				if tc.SchedulerConfigPath != "" && enabledPlugins(t, tc.SchedulerConfigPath)[name] {
					enabledBy = append(enabledBy, tc.Name)
				}
			}
			if !collected {
				t.Errorf("%s: no scheduler_plugin_execution_duration_seconds plugin label lists %s", configFile, name)
			}
			if len(enabledBy) == 0 {
				t.Errorf("%s: no test case's schedulerConfigPath enables %s", configFile, name)
			} else {
				t.Logf("%s is enabled by %q", name, enabledBy)
			}
		})
	}
}
