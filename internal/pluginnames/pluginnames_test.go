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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

func TestCheck(t *testing.T) {
	known := Known()
	enabled := func(names ...string) configv1.PluginSet {
		var s configv1.PluginSet
		for _, n := range names {
			s.Enabled = append(s.Enabled, configv1.Plugin{Name: n})
		}
		return s
	}
	tests := []struct {
		name    string
		plugins *configv1.Plugins
		want    []string
	}{
		{name: "known names, in-tree and ours", plugins: &configv1.Plugins{
			MultiPoint: enabled(plugins.Names()...),
			Score:      enabled("NodeResourcesBalancedAllocation"),
			Filter:     configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}},
		}},
		{name: "a letter missing", plugins: &configv1.Plugins{MultiPoint: enabled("NodeLessPods", "NodeLessPod")},
			want: []string{`profiles[0].plugins.multiPoint.enabled[1].name: Invalid value: "NodeLessPod": no such plugin; did you mean "NodeLessPods"?`}},
		{name: "case", plugins: &configv1.Plugins{Score: enabled("nodelesspods")},
			want: []string{`profiles[0].plugins.score.enabled[0].name: Invalid value: "nodelesspods": no such plugin; did you mean "NodeLessPods"?`}},
		{name: "every one, on every extension point", plugins: withNewestSet(&configv1.Plugins{
			Filter: enabled("PlacementPolcy"),
		}, enabled("Foo")), want: []string{
			`profiles[0].plugins.filter.enabled[0].name: Invalid value: "PlacementPolcy": no such plugin; did you mean "PlacementPolicy"?`,
			`profiles[0].plugins.` + newestSet + `.enabled[0].name: Invalid value: "Foo": no such plugin (this scheduler has the in-tree plugins and ` + strings.Join(plugins.Names(), ", ") + `)`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: ptr.To("p"), Plugins: tc.plugins}}}
			var got []string
			for _, err := range Check(cfg, known) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestFarNameNoSuggestion(t *testing.T) {
	if strings.Contains(unknownPlugin("Zzzzzzzz", Known()), "did you mean") {
		t.Error("a name far from every plugin got a suggestion")
	}
}

// TestCheckPluginConfig: a pluginConfig entry for a plugin the scheduler does
// not have is refused with its path and the name meant; kube-scheduler
// accepts it and runs the plugin with its default args.
func TestCheckPluginConfig(t *testing.T) {
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{
		SchedulerName: ptr.To("p"),
		PluginConfig:  []configv1.PluginConfig{{Name: "NodeLessPods"}, {Name: "NodeLessPod"}, {Name: "DefaultPreemption"}, {Name: "placementpolicy"}},
	}}}
	var got []string
	for _, err := range Check(cfg, Known()) {
		got = append(got, err.Error())
	}
	want := []string{
		`profiles[0].pluginConfig[1].name: Invalid value: "NodeLessPod": no such plugin; did you mean "NodeLessPods"?`,
		`profiles[0].pluginConfig[3].name: Invalid value: "placementpolicy": no such plugin; did you mean "PlacementPolicy"?`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want, +got):\n%s", diff)
	}
}

// TestUnknownNames: Check on a file's content as written, so that the
// indexes are the file's; a file that does not decode is an error, not a
// list of names.
func TestUnknownNames(t *testing.T) {
	errs, err := UnknownNames([]byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
  plugins:
    multiPoint: {enabled: [{name: NodeLessPods}, {name: PlacementPolcy}]}
  pluginConfig:
  - {name: PlacementPolicy}
  - {name: NodeLessPod}
`), Known())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`profiles[0].plugins.multiPoint.enabled[1].name: Invalid value: "PlacementPolcy": no such plugin; did you mean "PlacementPolicy"?`,
		`profiles[0].pluginConfig[1].name: Invalid value: "NodeLessPod": no such plugin; did you mean "NodeLessPods"?`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want, +got):\n%s", diff)
	}
	if errs, err := UnknownNames([]byte("profiles: [unclosed"), Known()); err == nil {
		t.Errorf("a file that does not decode: no error (errors %v)", errs)
	}
}
