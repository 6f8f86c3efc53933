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

package scheme

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/adminsched/scheduler-plugins/apis/config"
	configv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/apis/config/validation"
)

// PluginArgs returns, validated, the internal args that the New of plugin
// name receives in obj: obj itself when it holds the plugin's args kind, or
// the defaults of the kind when obj is nil. (The scheduler always passes
// defaulted args, also to a profile without a pluginConfig entry; nil comes
// from direct calls.) Errors name the plugin and, for invalid args, the
// field.
func PluginArgs[T runtime.Object](name string, obj runtime.Object) (T, error) {
	var zero T
	args, ok := obj.(T)
	switch {
	case obj == nil || (ok && reflect.ValueOf(args).IsNil()):
		d, err := DefaultArgs(name)
		if err != nil {
			return zero, err
		}
		if args, ok = d.(T); !ok {
			return zero, fmt.Errorf("the default args of %s are %T, not %T", name, d, zero)
		}
	case !ok:
		return zero, fmt.Errorf("want args of type %sArgs, got %T", name, obj)
	}
	if err := validation.ValidatePluginArgs(nil, name, args); err != nil {
		return zero, fmt.Errorf("invalid %s args: %w", name, err)
	}
	return args, nil
}

// DefaultArgs returns the internal args of plugin name as a profile that
// enables it without a pluginConfig entry gets them: its v1 args kind,
// defaulted and converted, so that they cannot drift from the v1 defaulter.
func DefaultArgs(name string) (runtime.Object, error) {
	kind := name + "Args"
	in, err := Scheme.New(configv1.SchemeGroupVersion.WithKind(kind))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	Scheme.Default(in)
	out, err := Scheme.New(config.SchemeGroupVersion.WithKind(kind))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	if err := Scheme.Convert(in, out, nil); err != nil {
		return nil, fmt.Errorf("plugin %s: converting the default args: %w", name, err)
	}
	return out, nil
}
