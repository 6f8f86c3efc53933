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
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMakeDemoJSON runs what README.md and the scenarios README show for
// scripts, `make demo ARGS="--output json"`, and decodes its stdout as the
// playground's JSON: make's echoed commands and the builds' "up to date"
// lines must go to stderr, or `| jq` fails. It failed so when demo's
// recipe and prerequisites echoed on stdout.
func TestMakeDemoJSON(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed: %v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "make", "demo", "ARGS=--output json")
	cmd.Dir = "../.."
	// As typed in a shell: under `make test`, MAKELEVEL would make this
	// make a sub-make, which prints "Entering directory" on stdout.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "MAKELEVEL" && name != "MAKEFLAGS" && name != "MFLAGS" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make demo ARGS=\"--output json\": %v\nstderr:\n%s", err, stderr.String())
	}
	r := decodeResult(t, stdout.String())
	if len(r.Pods) != 7 || len(r.Nodes) != 3 {
		t.Errorf("make demo's JSON holds %d pods on %d nodes, want the tutorial's 7 on 3", len(r.Pods), len(r.Nodes))
	}
}
