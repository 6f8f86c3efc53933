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

package main

import (
	"github.com/spf13/cobra"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/adminsched/scheduler-plugins/pkg/plugins"
)

// outOfTreePlugins lists the plugins this binary adds to the in-tree registry.
func outOfTreePlugins() []app.Option {
	return plugins.Options()
}

// newCommand is upstream's kube-scheduler command with our plugins and a
// warning for each pluginConfig entry that no enabled plugin reads.
func newCommand() *cobra.Command {
	var cmd *cobra.Command
	configFile := func() string { return cmd.Flags().Lookup("config").Value.String() }
	cmd = app.NewSchedulerCommand(append(outOfTreePlugins(), warnUnusedPluginConfig(configFile))...)
	return cmd
}
