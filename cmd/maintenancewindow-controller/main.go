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
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	return controllerrun.NewRootCommand(name,
		"Write MaintenanceWindow's windows as node conditions and a NoSchedule taint",
		`maintenancewindow-controller reads the MaintenanceWindow args of a KubeSchedulerConfiguration,
as kube-scheduler's --config reads them, and turns the windows that nodes announce into
the node lifecycle conditions MaintenancePlanned and MaintenanceInProgress and, while a
window is open, a NoSchedule taint, so that the default scheduler, autoscalers and the
descheduler see the windows the plugin sees.`,
		stdout, stderr, newRunCommand())
}

func run(args []string, stdout, stderr io.Writer) int {
	return controllerrun.Execute(newCommand(stdout, stderr), args)
}
