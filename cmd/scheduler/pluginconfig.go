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
	"os"

	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/internal/pluginnames"
)

// warnUnusedPluginConfig returns an Option that logs a warning for every
// pluginConfig entry of the --config file (configFile returns the flag's
// value) that no enabled plugin reads. kube-scheduler accepts such an entry
// and runs the plugin meant with its default args; a warning, not an error,
// so that a config the upstream binary takes keeps starting.
//
// app.Setup applies the registry options after it has loaded and validated
// the config and logging is configured, and before it builds the profiles:
// the warnings come before anything runs, in the configured log format.
// Options get no context; runCommand's is a plain context.Background(), so
// klog.Background() is the logger Setup itself uses.
func warnUnusedPluginConfig(configFile func() string) app.Option {
	return func(runtime.Registry) error {
		logUnusedPluginConfig(klog.Background(), configFile())
		return nil
	}
}

// logUnusedPluginConfig logs one warning per pluginConfig entry of the
// config file path that no enabled plugin of its profile reads. With no
// file, the scheduler runs the defaults, which use every entry.
func logUnusedPluginConfig(logger klog.Logger, path string) {
	if path == "" {
		return
	}
	cfg, err := loadDefaulted(path)
	if err != nil {
		// Setup has loaded this file already and reports its errors.
		logger.V(2).Info("Not checking the pluginConfig names", "config", path, "err", err)
		return
	}
	for _, u := range pluginnames.FindUnused(cfg, pluginnames.Known()) {
		kvs := []any{"profile", u.Profile, "pluginConfig", u.Path.String(), "name", u.Name, "reason", u.Reason()}
		if u.Meant != "" {
			kvs = append(kvs, "didYouMean", u.Meant)
		}
		logger.Info("Warning: pluginConfig entry ignored, its args reach no plugin", kvs...)
	}
}

// loadDefaulted reads the config file and defaults it as the scheduler
// does.
func loadDefaulted(path string) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return pluginnames.DecodeDefaulted(data)
}
