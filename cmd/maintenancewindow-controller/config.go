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
	"fmt"
	"slices"
	"strings"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/internal/filelimit"
	"github.com/adminsched/scheduler-plugins/internal/pluginnames"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

// maxConfigBytes caps the config file: 1 MiB is the most a ConfigMap, where
// a scheduler's config usually lives, holds.
const maxConfigBytes = 1 << 20

// loadArgs returns the MaintenanceWindow args of the profile named profile
// of the scheduler config at path, or of its only profile that runs the
// plugin when profile is empty: loaded, defaulted and validated as
// kube-scheduler's --config loads them. Errors name the file and profile.
func loadArgs(path, profile string) (*config.MaintenanceWindowArgs, string, error) {
	if err := filelimit.CheckSize(path, maxConfigBytes, "scheduler config file"); err != nil {
		return nil, "", fmt.Errorf("scheduler config: %w", err)
	}
	cfg, err := admissionpolicy.LoadConfig(path, checkPluginNames)
	if err != nil {
		return nil, "", err
	}
	var names, ours []string
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		names = append(names, prof.SchedulerName)
		if runsPlugin(prof) {
			ours = append(ours, prof.SchedulerName)
		}
	}
	switch {
	case profile != "" && !slices.Contains(names, profile):
		return nil, "", fmt.Errorf("scheduler config %s: --profile %s: no such profile (profiles: %s)", path, profile, strings.Join(names, ", "))
	case profile != "" && !slices.Contains(ours, profile):
		return nil, "", fmt.Errorf("scheduler config %s: profile %s does not run %s: it has no maintenance windows to write", path, profile, config.MaintenanceWindowName)
	case profile == "" && len(ours) == 0:
		return nil, "", fmt.Errorf("scheduler config %s: no profile (%s) runs %s: it has no maintenance windows to write", path, strings.Join(names, ", "), config.MaintenanceWindowName)
	case profile == "" && len(ours) > 1:
		return nil, "", fmt.Errorf("scheduler config %s: profiles %s run %s: name one with --profile", path, strings.Join(ours, ", "), config.MaintenanceWindowName)
	case profile == "":
		profile = ours[0]
	}
	prof := &cfg.Profiles[slices.Index(names, profile)]
	args, found, err := admissionpolicy.ArgsOf[*config.MaintenanceWindowArgs](prof, config.MaintenanceWindowName)
	if err != nil {
		return nil, "", fmt.Errorf("scheduler config %s: %w", path, err)
	}
	if !found {
		args = nil
	}
	// Defaults for a profile without pluginConfig, and validation, as the
	// plugin gets them.
	args, err = scheme.PluginArgs[*config.MaintenanceWindowArgs](config.MaintenanceWindowName, args)
	if err != nil {
		return nil, "", fmt.Errorf("scheduler config %s: profile %s: %w", path, profile, err)
	}
	return args, profile, nil
}

// runsPlugin reports whether prof runs MaintenanceWindow where it keeps pods
// off nodes or ranks them: at Filter or Score.
func runsPlugin(prof *schedconfig.KubeSchedulerProfile) bool {
	p := prof.Plugins
	return p != nil && (admissionpolicy.EnabledAt(p, p.Filter, config.MaintenanceWindowName) ||
		admissionpolicy.EnabledAt(p, p.Score, config.MaintenanceWindowName))
}

// checkPluginNames refuses, with their field paths, plugin names the
// scheduler does not have, as kube-scheduler would at start-up.
func checkPluginNames(data []byte) error {
	errs, err := pluginnames.UnknownNames(data, pluginnames.Known())
	if err != nil {
		return err
	}
	return errs.ToAggregate()
}
