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

package pluginnames

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
)

// Unused is a pluginConfig entry that no plugin of its profile reads: the
// scheduler drops its args without a word.
type Unused struct {
	// Profile is the profile's schedulerName.
	Profile string
	// Path is the entry's field path, profiles[i].pluginConfig[j].
	Path *field.Path
	// Name is the entry's name as written.
	Name string
	// Known is true when the scheduler has a plugin of that name, which the
	// profile does not enable.
	Known bool
	// Meant is, for a name that is no plugin, the plugin it is close to,
	// preferring the profile's enabled plugins; empty when none is close.
	Meant string
}

// Reason says in a few words why the entry is not read.
func (u Unused) Reason() string {
	if u.Known {
		return "the profile does not enable this plugin at any extension point"
	}
	return "no such plugin"
}

// FindUnused returns the pluginConfig entries of cfg that no enabled plugin
// of their profile reads. cfg must be defaulted, as the scheduler runs it:
// defaulting merges the default plugins into each profile's and appends
// pluginConfig entries only after the ones written, so the indexes are the
// file's.
func FindUnused(cfg *configv1.KubeSchedulerConfiguration, known sets.Set[string]) []Unused {
	var unused []Unused
	for i, prof := range cfg.Profiles {
		enabled := enabledNames(prof.Plugins)
		for j, pc := range prof.PluginConfig {
			if enabled.Has(pc.Name) {
				continue
			}
			u := Unused{
				Path:  field.NewPath("profiles").Index(i).Child("pluginConfig").Index(j),
				Name:  pc.Name,
				Known: known.Has(pc.Name),
			}
			if prof.SchedulerName != nil {
				u.Profile = *prof.SchedulerName
			}
			// A plugin's own name is no typo of another's.
			if !u.Known {
				u.Meant = closest(pc.Name, enabled)
			}
			if !u.Known && u.Meant == "" {
				u.Meant = closest(pc.Name, known)
			}
			unused = append(unused, u)
		}
	}
	return unused
}

// UnreadArgs refuses, with their field paths, the pluginConfig entries of
// data, a KubeSchedulerConfiguration file's content, that FindUnused finds
// once data is decoded and defaulted, but those of the plugins named in
// readElsewhere: the caller reads their args itself. The error is the
// file's decoding error.
func UnreadArgs(data []byte, known sets.Set[string], readElsewhere ...string) (field.ErrorList, error) {
	cfg, err := DecodeDefaulted(data)
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for _, u := range FindUnused(cfg, known) {
		if !slices.Contains(readElsewhere, u.Name) {
			errs = append(errs, field.Invalid(u.Path.Child("name"), u.Name, u.Reason()))
		}
	}
	return errs, nil
}

// enabledNames lists the plugins p enables at any extension point.
func enabledNames(p *configv1.Plugins) sets.Set[string] {
	names := sets.New[string]()
	if p == nil {
		return names
	}
	for _, point := range pluginSets(p) {
		for _, plugin := range point.set.Enabled {
			names.Insert(plugin.Name)
		}
	}
	return names
}

// DecodeDefaulted decodes a KubeSchedulerConfiguration with the scheduler's
// scheme and defaults it, as the scheduler runs it, keeping the v1 types
// that FindUnused reads.
func DecodeDefaulted(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	obj, gvk, err := scheme.Codecs.UniversalDecoder(configv1.SchemeGroupVersion).Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*configv1.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("got %s, not a KubeSchedulerConfiguration", gvk)
	}
	return cfg, nil
}
