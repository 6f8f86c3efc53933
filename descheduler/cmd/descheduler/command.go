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
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/adminsched/scheduler-plugins/descheduler/pkg/policyevictor"
)

// newCommand returns upstream's command with our plugins registered.
//
// Upstream's PreRunE replaces the global plugin registry with a fresh one
// holding only its built-in plugins (descheduler.SetupPlugins), so anything
// registered before Execute would be lost: ours are added right after it.
// The policy file is then checked strictly (checkPolicy).
func newCommand() *cobra.Command {
	cmd := app.NewDeschedulerCommand(os.Stdout)
	cmd.AddCommand(app.NewVersionCommand())
	upstream := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if upstream != nil {
			if err := upstream(c, args); err != nil {
				return err
			}
		}
		registerPlugins(pluginregistry.PluginRegistry)
		return checkPolicy(c.Flags().Lookup("policy-config-file").Value.String())
	}
	return cmd
}

// registerPlugins adds this project's descheduler plugins to registry.
func registerPlugins(registry pluginregistry.Registry) {
	policyevictor.Register(registry)
}
