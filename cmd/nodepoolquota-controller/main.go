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

// Command nodepoolquota-controller lifts the scheduling gate that
// admission (manifests/nodepoolquota-controller) puts on the pods of teams
// under a NodePoolQuota, while the team has room in the pool, and writes
// the quotas' status (pkg/nodepoolquota/controller):
//
//	nodepoolquota-controller run
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
		"Lift the NodePoolQuota scheduling gate while a team has room in the pool",
		`nodepoolquota-controller holds the pods of a team at its NodePoolQuota limit gated, so that
autoscalers do not add nodes for them, and lifts the gate, oldest first, as room frees up
in the pool. It writes each NodePoolQuota's status: usage per team, held pods, conditions.`,
		stdout, stderr, newRunCommand())
}

func run(args []string, stdout, stderr io.Writer) int {
	return controllerrun.Execute(newCommand(stdout, stderr), args)
}
