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

package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func TestValidatePluginArgs(t *testing.T) {
	path := field.NewPath("profiles").Index(0).Child("pluginConfig").Index(2).Child("args")
	tests := []struct {
		name    string
		plugin  string
		args    runtime.Object
		wantErr string
	}{
		{
			name:   "valid NodeLessPods args",
			plugin: config.NodeLessPodsName,
			args:   &config.NodeLessPodsArgs{Mode: config.NodeLessPodsLeastPods},
		},
		{
			name:    "invalid NodeLessPods args, with the caller's path",
			plugin:  config.NodeLessPodsName,
			args:    &config.NodeLessPodsArgs{Mode: "Fewest"},
			wantErr: `profiles[0].pluginConfig[2].args.mode: Unsupported value: "Fewest": supported values: "LeastPods", "MostPods"`,
		},
		{
			name:    "args of another kind",
			plugin:  config.NodeLessPodsName,
			args:    &schedconfig.NodeResourcesFitArgs{},
			wantErr: `profiles[0].pluginConfig[2].args: Invalid value: "*config.NodeResourcesFitArgs": must be *config.NodeLessPodsArgs`,
		},
		{
			name:   "a plugin that is not ours is left to the scheduler",
			plugin: "NodeResourcesFit",
			args:   &schedconfig.NodeResourcesFitArgs{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidatePluginArgs(path, tc.plugin, tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Errorf("error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
