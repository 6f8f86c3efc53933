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
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/descheduler/pkg/descheduler/scheme"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
)

// Register adds PolicyEvictor to registry, and its args' defaulters to the
// descheduler's scheme as the built-in plugins add theirs. Call it after
// the descheduler resets its registry (its command's PreRunE).
func Register(registry pluginregistry.Registry) {
	utilruntime.Must(AddToScheme(scheme.Scheme))
	pluginregistry.Register(PluginName, New, &PolicyEvictor{}, &PolicyEvictorArgs{}, ValidateArgs, Default, registry)
}
