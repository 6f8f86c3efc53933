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
	"os"
	"regexp"
	"strings"
	"testing"
)

// deschedulerArgs give the playground $DESCHEDULER_BINARY when set (make
// integration-test sets it); otherwise it takes the assets' descheduler.
func deschedulerArgs() []string {
	if bin := os.Getenv("DESCHEDULER_BINARY"); bin != "" {
		return []string{"--descheduler-binary", bin}
	}
	return nil
}

// TestDeschedulerRebalance: `playground test` of rebalance.yaml passes
// with its policy (the real descheduler spreads the replicas onto the
// nodes that joined) and fails, on the spread, with a policy that does
// nothing.
func TestDeschedulerRebalance(t *testing.T) {
	code, out, _ := runTestCommand(t, scenarios+"rebalance.yaml")
	if code != exitOK || !strings.Contains(out, "2 passed, 0 failed, 0 of 1 files could not run") {
		t.Fatalf("exit code %d, want %d with both assertions passed:\n%s", code, exitOK, out)
	}
	code, out, _ = runTestCommand(t, "--descheduler", "testdata/descheduler-noop-policy.yaml", scenarios+"rebalance.yaml")
	if code != exitTestFailed {
		t.Fatalf("with a policy that does nothing: exit code %d, want %d", code, exitTestFailed)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  PASS  expect\[0\] the new nodes join empty, the old ones stay full$`),
		regexp.MustCompile(`(?m)^  FAIL  expect\[1\] after the descheduler the replicas are spread over the 6 nodes, at most 1 apart\n        spread 4, more than 1: old-\d holds 4 of the selected pods, new-\d 0$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output does not match %s", want)
		}
	}
}

// TestDeschedulerInput: a policy without a deschedule step, and a missing
// binary, are refused before anything runs, saying what to do.
func TestDeschedulerInput(t *testing.T) {
	code, _, stderr := runPlayground(t, "--scenario", tutorial, "--descheduler", scenarios+"rebalance-descheduler-policy.yaml")
	if code != exitInput || !strings.Contains(stderr, "the scenario has no deschedule step, which is when the descheduler runs") {
		t.Errorf("a policy for a scenario without deschedule steps: exit code %d, want %d with the reason", code, exitInput)
	}
	code, _, stderr = runPlayground(t, "--scenario", scenarios+"rebalance.yaml", "--descheduler-binary", "/nonexistent/descheduler")
	if code != exitFailure || !strings.Contains(stderr, "the descheduler /nonexistent/descheduler is missing: build it with `make descheduler`") {
		t.Errorf("a missing descheduler: exit code %d, want %d with the make hint", code, exitFailure)
	}
}
