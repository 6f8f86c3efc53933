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

// Package schedulerplugins is the repository's root package. It holds only
// files that the playground (cmd/playground) embeds so that it runs from any
// folder, with no checkout: the default scheduler configuration and scenario,
// the NodePoolQuota CRD it installs before a scheduler that runs that plugin,
// and this module's go.mod and go.sum, from which the playground builds its
// control plane (internal/clusterbin). It is not a plugin API: the plugins are
// in pkg/, their args in apis/config, the NodePoolQuota API in
// apis/scheduling.
package schedulerplugins
