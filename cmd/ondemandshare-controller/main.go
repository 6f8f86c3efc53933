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

// Command ondemandshare-controller keeps, per workload, the minimum of
// replicas on on-demand nodes that the OnDemandShare policies of a
// scheduler's KubeSchedulerConfiguration ask for
// (kep/46-on-demand-share/README.md, section 6). One subcommand a role:
//
//	ondemandshare-controller render --config scheduler-config.yaml --apply
//	ondemandshare-controller run --config scheduler-config.yaml
//
// render writes (or, with --apply, applies) the policies as
// MutatingAdmissionPolicies that gate and label the pods they select at
// creation; run decides those pods' capacity class (a Deployment,
// leader-elected, with no right on admission policies).
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

// newCommand is the root command, which dispatches to the subcommands.
// render takes no logging flags: it writes only its output and its errors
// (and, with --apply or --delete, one line that says what it did).
func newCommand(stdout, stderr io.Writer) *cobra.Command {
	return controllerrun.NewRootCommand("ondemandshare-controller",
		"Keep a minimum share of each workload's replicas on on-demand nodes",
		`ondemandshare-controller reads the OnDemandShare policies of a KubeSchedulerConfiguration,
as kube-scheduler's --config reads it, and keeps, per workload, the minimum of replicas
on on-demand nodes each policy asks for; the rest may run on spot.`,
		stdout, stderr, newRenderCommand(stdout, stderr), newRunCommand())
}

func run(args []string, stdout, stderr io.Writer) int {
	return controllerrun.Execute(newCommand(stdout, stderr), args)
}
