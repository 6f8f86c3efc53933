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
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// Exit codes of every subcommand; playground test adds its own.
const (
	exitOK      = 0
	exitFailure = 1 // the control plane, the scheduler or the wait failed
	exitInput   = 2 // bad flags, scenario or scheduler config
)

// exitCode is what a command returns once it has printed its own errors:
// execute exits with it and prints nothing more.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit code %d", int(c)) }

// exitWith is nil for exitOK, else the exitCode.
func exitWith(code int) error {
	if code == exitOK {
		return nil
	}
	return exitCode(code)
}

// newRootCommand is `playground`: without a subcommand, it runs a scenario
// as `playground run` does, with the same flags.
func newRootCommand() *cobra.Command {
	root := newRunCommand("playground")
	root.Short = "Try the scheduler's profiles on a cluster without machines"
	root.Long = `Runs our scheduler end to end on an embedded control plane (etcd,
kube-apiserver, kube-controller-manager and KWOK): creates a scenario's nodes
and objects, whose controllers make the pods, runs its steps, waits for the
scheduler and shows where every pod landed. Without a command, it does what
"playground run" does.

The default scenario and scheduler config are built in, so it runs from any
folder. ` + assetsHelp
	root.Version = readVersion().short()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SuggestionsMinimumDistance = 2
	// Subcommands inherit it.
	root.SetFlagErrorFunc(suggestFlag)
	// execute reads it before the command line is parsed; here for --help.
	root.PersistentFlags().String(kubeMinorFlag, "", kubeMinorHelp)
	root.AddCommand(newRunCommand("run"), newSnapshotCommand(), newTestCommand(), newVersionCommand())
	return root
}

var dropGlobalFlags sync.Once

// execute runs the command line args (without the program's name) and
// returns the exit code. Every error is printed once, on stderr; a usage
// error (a flag, an argument) is followed by where to read the help, as
// kubectl does.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// cobra adds pflag's global flags to every command, where
	// Kubernetes' packages register theirs (verflag's --version, which
	// prints "Kubernetes v0.0.0"): the playground has none of its own there.
	dropGlobalFlags.Do(func() { pflag.CommandLine = pflag.NewFlagSet("playground", pflag.ContinueOnError) })
	// --kube-minor hands the whole command line to another minor's
	// playground, before any flag of this one is read.
	minor, args, err := kubeMinorArgs(args)
	if err == nil && minor != "" && minor != kubeversion.String() {
		var path string
		if path, err = minorPlayground(minor, ownDir()); err == nil {
			fmt.Fprintf(stderr, "%v\n", execMinor(path, args)) // returns only when the exec failed
			return exitFailure
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "playground: %v\nSee 'playground --help'.\n", err)
		return exitInput
	}
	root := newRootCommand()
	root.SetArgs(longFlagsWithOneDash(root, args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	var code exitCode
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	}
	if cmd == nil {
		cmd = root
	}
	fmt.Fprintf(stderr, "%s: %v\nSee '%s --help'.\n", cmd.CommandPath(), err, cmd.CommandPath())
	return exitInput
}

// noArgs refuses positional arguments, naming the first, and suggests a
// command for a mistyped one.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unexpected argument %q: %s takes flags only", args[0], cmd.CommandPath())
	if cmd.HasAvailableSubCommands() {
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean the command %q?", s[0])
		}
	}
	return errors.New(msg)
}

// longFlagsWithOneDash rewrites -name to --name where name is a long flag
// of the command args select: the standard flag package that the
// playground used before took both, and scripts may still pass -scenario.
// Shorthands (-o json, -v 4) are left alone, as is everything after --.
func longFlagsWithOneDash(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil {
		return args
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(name) > 1 && cmd.Flags().Lookup(name) != nil {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}
