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
	"context"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
)

// TestUnusedPluginConfigWarning: kube-scheduler accepts args under a
// misspelt plugin name (NodeLessPod with MostPods ran NodeLessPods as
// LeastPods) or for a plugin its profile does not enable; our binary's
// Setup logs a warning for each, naming the profile, the entry and the
// plugin meant, and still starts.
func TestUnusedPluginConfigWarning(t *testing.T) {
	ctx, logged := newBufferedContext(t)
	// The option logs through the global logger, as Setup does at that point.
	klog.SetLoggerWithOptions(klog.FromContext(ctx), klog.ContextualLogger(true))
	t.Cleanup(klog.ClearLogger)

	other := configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To("other"),
		PluginConfig:  []configv1.PluginConfig{testconfig.RawArgs(placementpolicy.Name, `{}`)},
	}
	path := writeConfig(t,
		customProfile(0, nil, testconfig.RawArgs("NodeLessPod", `{"mode": "MostPods"}`), testconfig.RawArgs(nodelesspods.Name, `{}`)),
		other)
	options := append(outOfTreePlugins(), warnUnusedPluginConfig(func() string { return path }))
	if _, err := setupScheduler(ctx, path, "", options...); err != nil {
		t.Fatalf("Setup refused the config (a warning must not stop the scheduler): %v", err)
	}

	const msg = "Warning: pluginConfig entry ignored, its args reach no plugin"
	want := []string{
		`profile="custom-scheduler" pluginConfig="profiles[0].pluginConfig[0]" name="NodeLessPod" reason="no such plugin" didYouMean="NodeLessPods"`,
		`profile="other" pluginConfig="profiles[1].pluginConfig[0]" name="PlacementPolicy" reason="the profile does not enable this plugin at any extension point"`,
	}
	var got []string
	for _, line := range strings.Split(logged(), "\n") {
		if strings.Contains(line, msg) {
			got = append(got, line)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasSuffix(got[i], want[i]) {
			t.Errorf("warning %d:\n%s\nwant it to end with\n%s", i, got[i], want[i])
		}
	}
}

// TestNoWarningWithoutConfigFile: without --config the scheduler runs the
// defaults, which read every entry.
func TestNoWarningWithoutConfigFile(t *testing.T) {
	ctx, logged := newBufferedContext(t)
	logUnusedPluginConfig(klog.FromContext(ctx), "")
	if log := logged(); log != "" {
		t.Errorf("logged without a config file:\n%s", log)
	}
}

// newBufferedContext returns a context whose logger writes to t and a
// function that returns the text logged so far, as klog formats it.
func newBufferedContext(t *testing.T) (context.Context, func() string) {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	t.Cleanup(cancel)
	return ctx, logger.GetSink().(ktesting.Underlier).GetBuffer().String
}
