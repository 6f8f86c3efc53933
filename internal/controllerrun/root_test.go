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
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestRootCommand: without a subcommand the root prints its help, which
// lists the subcommands; a subcommand's error is "<name>: <error>" and
// exit code 1; an unknown subcommand fails the same way.
func TestRootCommand(t *testing.T) {
	newRoot := func(stdout, stderr *bytes.Buffer) *cobra.Command {
		sub := &cobra.Command{Use: "run", Short: "Run it", RunE: func(*cobra.Command, []string) error { return errors.New("no cluster") }}
		return NewRootCommand("my-controller", "Do things", "my-controller does things.", stdout, stderr, sub)
	}
	var stdout, stderr bytes.Buffer
	if code := Execute(newRoot(&stdout, &stderr), nil); code != 0 || !strings.Contains(stdout.String(), "my-controller does things.") ||
		!strings.Contains(stdout.String(), "run         Run it") || strings.Contains(stdout.String(), "completion") {
		t.Errorf("no subcommand: exit code %d, stdout %q", code, stdout.String())
	}
	stdout.Reset()
	if code := Execute(newRoot(&stdout, &stderr), []string{"run"}); code != 1 || stderr.String() != "my-controller: no cluster\n" {
		t.Errorf("a failing subcommand: exit code %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := Execute(newRoot(&stdout, &stderr), []string{"nosuch"}); code != 1 || !strings.Contains(stderr.String(), `unknown command "nosuch" for "my-controller"`) {
		t.Errorf("unknown subcommand: exit code %d, stderr %q", code, stderr.String())
	}
}
