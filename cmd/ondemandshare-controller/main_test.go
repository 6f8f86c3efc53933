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
	"bytes"
	"strings"
	"testing"
)

// TestDispatch: the root command lists its subcommands and runs none by
// itself; an unknown one is an error that names it.
func TestDispatch(t *testing.T) {
	for _, tt := range []struct {
		name         string
		args         []string
		code         int
		stdout       []string
		stderr       string
		notInCommand []string
	}{
		{name: "no subcommand: the help", code: 0, stdout: []string{"Available Commands:", "render"}, notInCommand: []string{"completion"}},
		{name: "help of render", args: []string{"render", "--help"}, code: 0, stdout: []string{"--config", "--failure-policy", "--kube-version", "--output-file"}},
		{name: "unknown subcommand", args: []string{"nosuch"}, code: 1, stderr: `ondemandshare-controller: unknown command "nosuch" for "ondemandshare-controller"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.code, stderr.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout does not hold %q:\n%s", want, stdout.String())
				}
			}
			for _, deny := range tt.notInCommand {
				if strings.Contains(stdout.String(), deny) {
					t.Errorf("stdout holds %q:\n%s", deny, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q does not hold %q", stderr.String(), tt.stderr)
			}
		})
	}
}
