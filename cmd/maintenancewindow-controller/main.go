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

// Command maintenancewindow-controller writes the maintenance windows that
// the MaintenanceWindow plugin of a scheduler's KubeSchedulerConfiguration
// reads into the node lifecycle conditions MaintenancePlanned and
// MaintenanceInProgress, and a NoSchedule taint while a window is open
// (pkg/maintenancewindow/controller/README.md):
//
//	maintenancewindow-controller run --config scheduler-config.yaml
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version/verflag"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// newCommand is the root command, which dispatches to run; logging flags
// belong to run, the subcommand that logs.
func newCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "maintenancewindow-controller",
		Short: "Write MaintenanceWindow's windows as node conditions and a NoSchedule taint",
		Long: `maintenancewindow-controller reads the MaintenanceWindow args of a KubeSchedulerConfiguration,
as kube-scheduler's --config reads them, and turns the windows that nodes announce into
the node lifecycle conditions MaintenancePlanned and MaintenanceInProgress and, while a
window is open, a NoSchedule taint, so that the default scheduler, autoscalers and the
descheduler see the windows the plugin sees.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			verflag.PrintAndExitIfRequested()
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.CompletionOptions.DisableDefaultCmd = true
	verflag.AddFlags(root.PersistentFlags())
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCommand())
	return root
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := newCommand(stdout, stderr)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "maintenancewindow-controller: %v\n", err)
		return 1
	}
	return 0
}
