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
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// validators maps each plugin of this repository to its args validator: the
// one place a new plugin's validation is registered (as in-tree
// validatePluginConfig does for the in-tree plugins).
var validators = map[string]func(*field.Path, runtime.Object) error{
	config.NodeLessPodsName:      typed(ValidateNodeLessPodsArgs),
	config.PlacementPolicyName:   typed(ValidatePlacementPolicyArgs),
	config.MaintenanceWindowName: typed(ValidateMaintenanceWindowArgs),
	config.OnDemandShareName:     typed(ValidateOnDemandShareArgs),
}

// typed adapts a validator of one args type to the dispatch's signature.
func typed[T runtime.Object](validate func(*field.Path, T) error) func(*field.Path, runtime.Object) error {
	return func(path *field.Path, obj runtime.Object) error {
		args, ok := obj.(T)
		if !ok {
			var want T
			return field.TypeInvalid(path, fmt.Sprintf("%T", obj), fmt.Sprintf("must be %T", want))
		}
		return validate(path, args)
	}
}

// ValidatePluginArgs validates the args of plugin pluginName when it is one
// of this repository's plugins, and returns nil for any other plugin (the
// scheduler validates its in-tree plugins' args itself). path is where the
// args live.
func ValidatePluginArgs(path *field.Path, pluginName string, args runtime.Object) error {
	validate, ok := validators[pluginName]
	if !ok {
		return nil
	}
	return validate(path, args)
}
