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

package controllerrun

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version/verflag"
)

// NewRootCommand is the root command of a controller binary: it prints
// its help without a subcommand, --version, no completion command, and
// leaves the errors to Execute. Logging flags belong to the subcommands
// that log.
func NewRootCommand(name, short, long string, stdout, stderr io.Writer, subcommands ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           name,
		Short:         short,
		Long:          long,
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
	root.AddCommand(subcommands...)
	return root
}

// Execute runs root with args and returns the process's exit code: 1,
// with "<name>: <error>" on root's error output, when it fails.
func Execute(root *cobra.Command, args []string) int {
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(root.ErrOrStderr(), "%s: %v\n", root.Name(), err)
		return 1
	}
	return 0
}
