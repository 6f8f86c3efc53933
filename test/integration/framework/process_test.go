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

package framework

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeTB records what StartProcess asks of a test, to run its cleanup as
// a passing or a failing test would.
type fakeTB struct {
	testing.TB
	cleanups []func()
	failed   bool
	logs     []string
}

func (f *fakeTB) Helper()                      {}
func (f *fakeTB) Cleanup(fn func())            { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Failed() bool                 { return f.failed }
func (f *fakeTB) Logf(format string, a ...any) { f.logs = append(f.logs, fmt.Sprintf(format, a...)) }
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// shell starts sh -c script as a test's process, and waits until it has
// printed ready (its traps are set then).
func shell(t *testing.T, tb testing.TB, script string) *Process {
	t.Helper()
	p, err := StartProcess(tb, "sh", exec.Command("sh", "-c", script))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Output(), "ready") {
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("the script did not print ready (exited: %v): %q", p.Exited(), p.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

func TestStopSendsSIGTERM(t *testing.T) {
	p := shell(t, t, `trap 'echo terminated; exit 0' TERM; echo out; echo err >&2; echo ready; while :; do sleep 0.05; done`)
	if p.Exited() || p.ProcessState() != nil {
		t.Fatalf("the process exited early: %q", p.Output())
	}
	p.Stop()
	p.Stop() // a second Stop (the test's cleanup, say) does nothing
	if !p.Exited() || !p.ProcessState().Success() {
		t.Errorf("after Stop: exited %v, state %v, want a clean exit", p.Exited(), p.ProcessState())
	}
	if got, want := p.Output(), "out\nerr\nready\nterminated\n"; got != want {
		t.Errorf("output %q, want %q (stdout and stderr, and the TERM trap's line)", got, want)
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = 200 * time.Millisecond
	p := shell(t, t, `trap '' TERM; echo ready; exec sleep 60`)
	start := time.Now()
	p.Stop()
	ws, _ := p.ProcessState().Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("a process that ignores SIGTERM ended with %v, want killed by SIGKILL", p.ProcessState())
	}
	if d := time.Since(start); d < stopGrace || d > 10*time.Second {
		t.Errorf("Stop took %v, want the grace period (%v) and little more", d, stopGrace)
	}
}

func TestKill(t *testing.T) {
	p := shell(t, t, `trap 'echo terminated; exit 0' TERM; echo ready; while :; do sleep 0.05; done`)
	p.Kill()
	p.Stop() // does nothing after Kill
	if strings.Contains(p.Output(), "terminated") {
		t.Errorf("Kill let the process handle SIGTERM: %q", p.Output())
	}
	if ws, _ := p.ProcessState().Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("after Kill: %v, want killed by SIGKILL", p.ProcessState())
	}
}

func TestCleanupLogsOutputOnFailure(t *testing.T) {
	for _, failed := range []bool{false, true} {
		tb := &fakeTB{TB: t}
		// hello before ready: shell returns once ready is read, and a line
		// printed after it could still be in the pipe when the cleanup
		// kills the process (it was, under -race on a busy machine).
		p := shell(t, tb, `echo hello; echo ready; exec sleep 60`)
		if len(tb.cleanups) != 1 {
			t.Fatalf("StartProcess registered %d cleanups, want 1", len(tb.cleanups))
		}
		tb.failed = failed
		tb.runCleanups()
		if !p.Exited() {
			t.Errorf("failed=%v: the process still runs after the test's cleanup", failed)
		}
		want := []string(nil)
		if failed {
			want = []string{"output of sh:\nhello\nready\n"}
		}
		if strings.Join(tb.logs, "|") != strings.Join(want, "|") {
			t.Errorf("failed=%v: logged %q, want %q", failed, tb.logs, want)
		}
	}
}

func TestStartError(t *testing.T) {
	tb := &fakeTB{TB: t}
	p, err := StartProcess(tb, "missing", exec.Command("/nonexistent/binary"))
	if err == nil || p != nil {
		t.Fatalf("StartProcess of a missing binary: %v, %v; want an error", p, err)
	}
	if len(tb.cleanups) != 0 {
		t.Errorf("StartProcess registered a cleanup for a process that did not start")
	}
}
