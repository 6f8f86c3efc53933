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

// Command license-driver is a DRA driver that makes the seats of a license
// server a counted resource of the cluster. It has two roles, one per
// subcommand: `controller` (a Deployment, leader-elected) publishes one
// device per seat and the features' DeviceClasses; `kubelet-plugin` (a
// DaemonSet) prepares allocated seats on each node. See
// internal/licensedriver and cmd/license-driver/README.md.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/version/verflag"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

func main() {
	os.Exit(cli.Run(newCommand()))
}

func newCommand() *cobra.Command {
	logging := controllerrun.NewLogging()
	root := &cobra.Command{
		Use:   "license-driver",
		Short: "A DRA driver for the seats of a license server",
		Long: `license-driver publishes the seats of a license server's features as DRA devices,
so that Kubernetes' own allocation counts them, and prepares them on the nodes.

` + howToAsk(),
		SilenceUsage: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			verflag.PrintAndExitIfRequested()
			// SIGTERM (a pod being stopped) cancels the role's context:
			// the controller releases its Lease, the kubelet plugin
			// removes its sockets.
			return logging.Start(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	logging.AddFlags(root.PersistentFlags())
	verflag.AddFlags(root.PersistentFlags())
	root.AddCommand(controllerrun.WithSecureServing(newControllerCommand(), "license-driver"), newKubeletPluginCommand())
	return root
}

// howToAsk ends the help: the resources.limits form needs DRA extended
// resources, which the build's minor may lack.
func howToAsk() string {
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		return "A pod asks for a seat with a ResourceClaim of DeviceClass <pool>.licenses.adminsched.io;\n" +
			"resources.limits: {licenses.adminsched.io/<pool>: 1} does not work here: " +
			kubeversion.Unavailable(kubeversion.DRAExtendedResource).Error()
	}
	return "A pod asks for a seat with resources.limits: {licenses.adminsched.io/<pool>: 1}."
}

// loadConfig reads the file of --config. The error says which file it is:
// a missing file's error from the OS names only the path.
func loadConfig(path string) (*config.Configuration, error) {
	c, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("the license driver configuration (--config): %w", err)
	}
	return c, nil
}
