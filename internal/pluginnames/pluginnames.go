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

// Package pluginnames checks the plugin names of a KubeSchedulerConfiguration
// as written against the plugins this scheduler has (the in-tree registry
// and ours), each with its field path and, when one is close, the name
// meant. The playground and placement-admission refuse a file that names a
// plugin this scheduler does not have, before they act on it.
package pluginnames

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/didyoumean"
	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

// Known returns the names the scheduler can enable: the in-tree registry
// and ours, as the binary and the playground's scheduler register.
func Known() sets.Set[string] {
	known := sets.New(plugins.Names()...)
	for name := range frameworkplugins.NewInTreeRegistry() {
		known.Insert(name)
	}
	return known
}

// Check finds every plugin name in cfg that the scheduler does not have:
// in the plugins a profile enables, and in its pluginConfig.
// kube-scheduler refuses an unknown enabled plugin only once it builds the
// profiles, with the first one and the extension point it happened to
// expand first ("PreFilterPlugin \"X\" does not exist"), and it accepts
// args for a plugin it does not have without a word: a misspelt
// pluginConfig name leaves the plugin with its default args. Each name is
// given with its field path and, when one is close, the name meant. cfg is
// the file as written, not defaulted: defaulting puts the default plugins in
// front of a profile's own, and the indexes would not be the file's.
func Check(cfg *configv1.KubeSchedulerConfiguration, known sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i, prof := range cfg.Profiles {
		profile := field.NewPath("profiles").Index(i)
		if prof.Plugins != nil {
			path := profile.Child("plugins")
			for _, point := range pluginSets(prof.Plugins) {
				for j, p := range point.set.Enabled {
					if !known.Has(p.Name) {
						errs = append(errs, field.Invalid(path.Child(point.name, "enabled").Index(j).Child("name"), p.Name, unknownPlugin(p.Name, known)))
					}
				}
			}
		}
		for j, pc := range prof.PluginConfig {
			if !known.Has(pc.Name) {
				errs = append(errs, field.Invalid(profile.Child("pluginConfig").Index(j).Child("name"), pc.Name, unknownPlugin(pc.Name, known)))
			}
		}
	}
	return errs
}

// UnknownNames is Check on data, a KubeSchedulerConfiguration file's
// content, decoded as written. The error is the file's decoding error.
func UnknownNames(data []byte, known sets.Set[string]) (field.ErrorList, error) {
	var written configv1.KubeSchedulerConfiguration
	if err := yaml.Unmarshal(data, &written); err != nil {
		return nil, err
	}
	return Check(&written, known), nil
}

// unknownPlugin says that name is no plugin, and which one may be meant.
func unknownPlugin(name string, known sets.Set[string]) string {
	if meant := closest(name, known); meant != "" {
		return fmt.Sprintf("no such plugin; did you mean %q?", meant)
	}
	return "no such plugin (this scheduler has the in-tree plugins and " + strings.Join(plugins.Names(), ", ") + ")"
}

// closest returns the known name nearest to name, when it is near enough to
// be a typo.
func closest(name string, known sets.Set[string]) string {
	return didyoumean.Closest(name, sets.List(known))
}

type namedPluginSet struct {
	name string
	set  configv1.PluginSet
}

// pluginSets lists a profile's plugin sets under their v1 field names.
func pluginSets(p *configv1.Plugins) []namedPluginSet {
	all := []namedPluginSet{
		{"preEnqueue", p.PreEnqueue}, {"queueSort", p.QueueSort}, {"preFilter", p.PreFilter},
		{"filter", p.Filter}, {"postFilter", p.PostFilter}, {"preScore", p.PreScore},
		{"score", p.Score}, {"reserve", p.Reserve}, {"permit", p.Permit}, {"preBind", p.PreBind},
		{"bind", p.Bind}, {"postBind", p.PostBind}, {"multiPoint", p.MultiPoint},
	}
	all = append(all, podGroupSets(p)...)
	return slices.DeleteFunc(all, func(s namedPluginSet) bool { return len(s.set.Enabled) == 0 })
}
