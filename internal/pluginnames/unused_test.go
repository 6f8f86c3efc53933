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
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// decodeDefaulted decodes a KubeSchedulerConfiguration and defaults it, as
// the scheduler runs it, keeping the v1 types.
func decodeDefaulted(t *testing.T, text string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := DecodeDefaulted([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestFindUnused: every pluginConfig entry that no enabled plugin of its
// profile reads, misspelt or for a plugin the profile leaves out; the
// entries of default plugins and of the profile's own are read.
func TestFindUnused(t *testing.T) {
	cfg := decodeDefaulted(t, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: custom-scheduler
  plugins:
    multiPoint: {enabled: [{name: NodeLessPods}], disabled: [{name: PodTopologySpread}]}
  pluginConfig:
  - {name: NodeLessPod, args: {mode: MostPods}}
  - {name: NodeLessPods}
  - {name: DefaultPreemption}
  - {name: PodTopologySpread}
  - {name: Zzzzzzzz}
- schedulerName: other
  pluginConfig:
  - {name: placementpolicy}
`)
	var got []string
	for _, u := range FindUnused(cfg, Known()) {
		got = append(got, u.Profile+" "+u.Path.String()+" "+u.Name+": "+u.Reason()+"; meant "+u.Meant)
	}
	want := []string{
		"custom-scheduler profiles[0].pluginConfig[0] NodeLessPod: no such plugin; meant NodeLessPods",
		"custom-scheduler profiles[0].pluginConfig[3] PodTopologySpread: the profile does not enable this plugin at any extension point; meant ",
		"custom-scheduler profiles[0].pluginConfig[4] Zzzzzzzz: no such plugin; meant ",
		"other profiles[1].pluginConfig[0] placementpolicy: no such plugin; meant PlacementPolicy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unused entries (-want, +got):\n%s", diff)
	}
}

// TestUnreadArgs: every entry FindUnused finds, as a field error on its
// name, but those of the plugins the caller reads itself; a file that does
// not decode is an error.
func TestUnreadArgs(t *testing.T) {
	data := []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
  pluginConfig:
  - {name: DefaultPreemption}
  - {name: PlacementPolicy}
  - {name: OnDemandShare}
  - {name: NodeLessPod}
`)
	placement := `profiles[0].pluginConfig[1].name: Invalid value: "PlacementPolicy": the profile does not enable this plugin at any extension point`
	onDemand := `profiles[0].pluginConfig[2].name: Invalid value: "OnDemandShare": the profile does not enable this plugin at any extension point`
	misspelt := `profiles[0].pluginConfig[3].name: Invalid value: "NodeLessPod": no such plugin`
	for _, tc := range []struct {
		name          string
		readElsewhere []string
		want          []string
	}{
		{"all refused", nil, []string{placement, onDemand, misspelt}},
		{"but those read elsewhere", []string{"OnDemandShare", "PlacementPolicy"}, []string{misspelt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs, err := UnreadArgs(data, Known(), tc.readElsewhere...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want, +got):\n%s", diff)
			}
		})
	}
	if errs, err := UnreadArgs([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Nope\n"), Known()); err == nil {
		t.Errorf("a file that does not decode: no error (errors %v)", errs)
	}
}
