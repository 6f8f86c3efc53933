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

// Package plugins is the registry of this repository's plugins: the one list
// that the binary, its tests, scheduler_perf and the playground register from,
// and that tests hold the README, the chart schema and hack/bench.sh to.
package plugins

import (
	"slices"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
	"github.com/adminsched/scheduler-plugins/pkg/nodepoolquota"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
)

// Plugin is one entry of the registry.
type Plugin struct {
	// Name is the name profiles enable the plugin by; its args kind is
	// Name+"Args" unless NoArgs.
	Name string
	// NoArgs is true for a plugin that takes no args: no args kind is
	// registered, and the scheduler hands its factory nil.
	NoArgs bool
	// Factory builds the plugin.
	Factory frameworkruntime.PluginFactory
	// Type is a nil pointer of the plugin's type. ExtensionPoints reads the
	// interfaces it implements, so that list cannot drift from the code.
	Type fwk.Plugin
}

// All returns the registry. Adding a plugin to the binary is one entry here.
func All() []Plugin {
	return []Plugin{
		{Name: nodelesspods.Name, Factory: nodelesspods.New, Type: (*nodelesspods.NodeLessPods)(nil)},
		{Name: placementpolicy.Name, Factory: placementpolicy.New, Type: (*placementpolicy.PlacementPolicy)(nil)},
		{Name: maintenancewindow.Name, Factory: maintenancewindow.New, Type: (*maintenancewindow.MaintenanceWindow)(nil)},
		{Name: ondemandshare.Name, Factory: ondemandshare.New, Type: (*ondemandshare.OnDemandShare)(nil)},
		{Name: nodepoolquota.Name, Factory: nodepoolquota.New, Type: (*nodepoolquota.NodePoolQuota)(nil), NoArgs: true},
	}
}

// Names returns the plugins' names in the order of All.
func Names() []string {
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	return names
}

// Options returns one app.WithPlugin per plugin, for
// app.NewSchedulerCommand and app.Setup.
func Options() []app.Option {
	var options []app.Option
	for _, p := range All() {
		options = append(options, app.WithPlugin(p.Name, p.Factory))
	}
	return options
}

// Registry returns the plugins as an out-of-tree registry, as
// scheduler_perf and the framework's test helpers take it.
func Registry() frameworkruntime.Registry {
	registry := frameworkruntime.Registry{}
	for _, p := range All() {
		registry[p.Name] = p.Factory
	}
	return registry
}

// extensionPoints pairs each extension point, named as in a profile's
// plugins (capitalized), with a check that a plugin implements it.
var extensionPoints = slices.Concat([]extensionPoint{
	{"PreEnqueue", is[fwk.PreEnqueuePlugin]},
	{"QueueSort", is[fwk.QueueSortPlugin]},
	{"PreFilter", is[fwk.PreFilterPlugin]},
	{"Filter", is[fwk.FilterPlugin]},
	{"PostFilter", is[fwk.PostFilterPlugin]},
}, podGroupPostFilter, []extensionPoint{
	{"PreScore", is[fwk.PreScorePlugin]},
	{"Score", is[fwk.ScorePlugin]},
	// Only a type's ScoreExtensions method says whether it normalizes;
	// every score plugin of this repository does.
	{"NormalizeScore", is[fwk.ScoreExtensions]},
	{"Reserve", is[fwk.ReservePlugin]},
	{"Permit", is[fwk.PermitPlugin]},
	{"PreBind", is[fwk.PreBindPlugin]},
	{"Bind", is[fwk.BindPlugin]},
	{"PostBind", is[fwk.PostBindPlugin]},
}, placementPoints)

type extensionPoint struct {
	name       string
	implements func(fwk.Plugin) bool
}

func is[T any](p fwk.Plugin) bool {
	_, ok := p.(T)
	return ok
}

// ExtensionPoints returns the extension points the plugin's type implements,
// in the order the scheduler runs them.
func (p Plugin) ExtensionPoints() []string {
	var points []string
	for _, e := range extensionPoints {
		if e.implements(p.Type) {
			points = append(points, e.name)
		}
	}
	return points
}
