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

package admissionpolicy

import (
	"fmt"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	pluginvalidation "github.com/adminsched/scheduler-plugins/apis/config/validation"
)

// ArgsOf returns the args that prof's pluginConfig holds for plugin, of
// type T, and whether it holds any (the last entry of that name, as the
// scheduler reads it). Args of another type are an error.
func ArgsOf[T runtime.Object](prof *schedconfig.KubeSchedulerProfile, plugin string) (T, bool, error) {
	var args T
	found := false
	for _, pc := range prof.PluginConfig {
		if pc.Name != plugin || pc.Args == nil {
			continue
		}
		typed, ok := pc.Args.(T)
		if !ok {
			return args, false, fmt.Errorf("profile %q: pluginConfig %s: args are %T, want %T", prof.SchedulerName, pc.Name, pc.Args, args)
		}
		args, found = typed, true
	}
	return args, found, nil
}

// EnabledAt reports whether a profile with plugins runs plugin at the
// extension point set: named there, or named at multiPoint and not
// disabled there, which is how the framework expands multiPoint.
func EnabledAt(plugins *schedconfig.Plugins, set schedconfig.PluginSet, plugin string) bool {
	has := func(list []schedconfig.Plugin, names ...string) bool {
		return slices.ContainsFunc(list, func(p schedconfig.Plugin) bool { return slices.Contains(names, p.Name) })
	}
	if has(set.Enabled, plugin) {
		return true
	}
	if has(set.Disabled, plugin, "*") {
		return false
	}
	return has(plugins.MultiPoint.Enabled, plugin)
}

// LoadConfig loads path with the loader kube-scheduler's --config uses (the
// scheme's strict decoder and defaults), then validates it, runs check on
// the file as written (the caller's checks of plugin names), and validates
// our plugins' args with their field paths, so that what is rendered is
// what the scheduler would run. The caller caps the file's size first.
func LoadConfig(path string, check func(written []byte) error) (*schedconfig.KubeSchedulerConfiguration, error) {
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	// The file as written (it decoded strictly above), for the field paths
	// of what check finds.
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	if err := check(data); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	for i, prof := range cfg.Profiles {
		for j, pc := range prof.PluginConfig {
			p := field.NewPath("profiles").Index(i).Child("pluginConfig").Index(j).Child("args")
			if err := pluginvalidation.ValidatePluginArgs(p, pc.Name, pc.Args); err != nil {
				return nil, fmt.Errorf("scheduler config %s: %w", path, err)
			}
		}
	}
	return cfg, nil
}
