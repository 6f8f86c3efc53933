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

// Package plugins lists every plugin of this repository as options for the
// kube-scheduler command, so the binary, its tests and other builds register
// the same set.
package plugins

import (
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow"
	"github.com/adminsched/scheduler-plugins/pkg/nodelesspods"
	"github.com/adminsched/scheduler-plugins/pkg/placementpolicy"
)

// Options returns one app.WithPlugin per plugin. Adding a plugin to the binary
// is one line here.
func Options() []app.Option {
	return []app.Option{
		app.WithPlugin(nodelesspods.Name, nodelesspods.New),
		app.WithPlugin(placementpolicy.Name, placementpolicy.New),
		app.WithPlugin(maintenancewindow.Name, maintenancewindow.New),
	}
}
