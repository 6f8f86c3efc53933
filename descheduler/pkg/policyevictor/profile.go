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

package policyevictor

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

// maxConfigBytes caps the scheduler config, as the other readers of it do:
// 1 MiB is the most a ConfigMap holds.
const maxConfigBytes = 1 << 20

// policies are the args of the scheduler profile the evictor follows; a
// nil field means the profile does not run that plugin.
type policies struct {
	profile   string
	placement *config.PlacementPolicyArgs
	windows   *config.MaintenanceWindowArgs
}

// loadPolicies loads args.SchedulerConfig as kube-scheduler loads it and
// returns the args of the profile args.SchedulerName names, or of the only
// profile running one of our plugins when it is empty; no args at all when
// that profile, or every profile, runs neither. Errors carry the field
// paths of args.
func loadPolicies(args *PolicyEvictorArgs) (*policies, field.ErrorList) {
	cfgPath, namePath := field.NewPath("schedulerConfig"), field.NewPath("schedulerName")
	if args.SchedulerConfig == "" {
		return nil, field.ErrorList{field.Required(cfgPath, "the path of the scheduler's KubeSchedulerConfiguration")}
	}
	if fi, err := os.Stat(args.SchedulerConfig); err == nil && (!fi.Mode().IsRegular() || fi.Size() > maxConfigBytes) {
		return nil, field.ErrorList{field.Invalid(cfgPath, args.SchedulerConfig,
			fmt.Sprintf("must be a regular file of at most %d bytes", maxConfigBytes))}
	}
	cfg, err := admissionpolicy.LoadConfig(args.SchedulerConfig, func([]byte) error { return nil })
	if err != nil {
		return nil, field.ErrorList{field.Invalid(cfgPath, args.SchedulerConfig, err.Error())}
	}
	var ours []*schedconfig.KubeSchedulerProfile
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		if args.SchedulerName != "" && prof.SchedulerName != args.SchedulerName {
			continue
		}
		if runs(prof, config.PlacementPolicyName) || runs(prof, config.MaintenanceWindowName) {
			ours = append(ours, prof)
		} else if args.SchedulerName != "" {
			// Nothing to enforce (e.g. a NodeLessPods-only profile): the
			// shipped policies work with any of our installs, and New says
			// so in the log.
			return &policies{profile: args.SchedulerName}, nil
		}
	}
	switch {
	case len(ours) == 0 && args.SchedulerName != "":
		return nil, field.ErrorList{field.NotFound(namePath, args.SchedulerName)}
	case len(ours) == 0:
		return &policies{}, nil
	case len(ours) > 1:
		names := make([]string, len(ours))
		for i, p := range ours {
			names[i] = p.SchedulerName
		}
		return nil, field.ErrorList{field.Required(namePath,
			"profiles "+strings.Join(names, ", ")+" run PlacementPolicy or MaintenanceWindow: name one")}
	}
	prof := ours[0]
	pol := &policies{profile: prof.SchedulerName}
	var errs field.ErrorList
	if runs(prof, config.PlacementPolicyName) {
		pol.placement, err = profileArgs[*config.PlacementPolicyArgs](prof, config.PlacementPolicyName)
		if err != nil {
			errs = append(errs, field.Invalid(cfgPath, args.SchedulerConfig, err.Error()))
		}
	}
	if runs(prof, config.MaintenanceWindowName) {
		pol.windows, err = profileArgs[*config.MaintenanceWindowArgs](prof, config.MaintenanceWindowName)
		if err != nil {
			errs = append(errs, field.Invalid(cfgPath, args.SchedulerConfig, err.Error()))
		}
	}
	return pol, errs
}

// runs reports whether prof runs plugin where it enforces something: at
// Filter, or at Score (PlacementPolicy's Prefer rules).
func runs(prof *schedconfig.KubeSchedulerProfile, plugin string) bool {
	if prof.Plugins == nil {
		return false
	}
	return admissionpolicy.EnabledAt(prof.Plugins, prof.Plugins.Filter, plugin) ||
		admissionpolicy.EnabledAt(prof.Plugins, prof.Plugins.Score, plugin)
}

// profileArgs returns the args prof gives plugin, defaulted as the
// scheduler defaults them when the profile has no pluginConfig for it.
func profileArgs[T runtime.Object](prof *schedconfig.KubeSchedulerProfile, plugin string) (T, error) {
	args, found, err := admissionpolicy.ArgsOf[T](prof, plugin)
	if err != nil {
		return args, err
	}
	var obj runtime.Object
	if found {
		obj = args
	}
	return scheme.PluginArgs[T](plugin, obj)
}
