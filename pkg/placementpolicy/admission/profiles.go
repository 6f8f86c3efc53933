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

package admission

import (
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
)

// ProfileArgs is the PlacementPolicy args of one scheduler profile, and the
// extension points at which the profile runs the plugin.
type ProfileArgs struct {
	SchedulerName string
	Args          *config.PlacementPolicyArgs
	// Filter says the profile runs the plugin's Filter (Require rules), Score
	// its Score (Prefer rules).
	Filter, Score bool
}

// FromConfig returns the PlacementPolicy args of every profile of cfg (a
// config loaded and defaulted as kube-scheduler's --config loads it) that
// runs the plugin at Filter or Score, in the profiles' order.
func FromConfig(cfg *schedconfig.KubeSchedulerConfiguration) ([]ProfileArgs, error) {
	var out []ProfileArgs
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		pa := ProfileArgs{SchedulerName: prof.SchedulerName}
		if prof.Plugins != nil {
			pa.Filter = admissionpolicy.EnabledAt(prof.Plugins, prof.Plugins.Filter, config.PlacementPolicyName)
			pa.Score = admissionpolicy.EnabledAt(prof.Plugins, prof.Plugins.Score, config.PlacementPolicyName)
		}
		if !pa.Filter && !pa.Score {
			continue
		}
		args, found, err := admissionpolicy.ArgsOf[*config.PlacementPolicyArgs](prof, config.PlacementPolicyName)
		if err != nil {
			return nil, err
		}
		pa.Args = &config.PlacementPolicyArgs{}
		if found {
			pa.Args = args
		}
		out = append(out, pa)
	}
	return out, nil
}
