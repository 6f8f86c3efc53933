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

package docs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockTimeout bounds one block: the longest run a doc shows (a Karpenter
// scenario, `make demo` with its up-to-date checks) takes about a minute.
const blockTimeout = 10 * time.Minute

// keepRE is a command line that leaves a playground cluster up until
// Ctrl-C: the shell starts it in the background and goes on once the
// cluster's banner gave its export line.
var keepRE = regexp.MustCompile(`^\s*\S*playground\b[^#]*\s--keep\b`)

// exportRE is the banner's line that the commands after it need.
var exportRE = regexp.MustCompile(`(?m)^\s*(export KUBECONFIG=\S.*)$`)

// A shell runs the blocks of one doc, in order, as a reader would in one
// terminal: in the copy of the clone at dir, with what the blocks before
// exported and the directory they changed to. Every block runs in its own
// process group, so that what it leaves in the background is stopped at
// the end.
type shell struct {
	t       *testing.T
	dir     string
	env     []string
	state   string // a script that restores exports and directory
	groups  []int  // process groups to stop at the end
	keeps   []keepProcess
	scratch string
}

// A keepProcess is a playground left up by a block; done is closed when it
// has exited.
type keepProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func newShell(t *testing.T, dir string, env []string) *shell {
	scratch := t.TempDir()
	state := filepath.Join(scratch, "state.sh")
	if err := os.WriteFile(state, []byte("cd "+quote(dir)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &shell{t: t, dir: dir, env: env, state: state, scratch: scratch}
}

// run runs the commands of one block and returns what it printed (stdout and stderr in
// the order written).
func (s *shell) run(text string) (string, error) {
	var out bytes.Buffer
	var script []string
	flush := func() error {
		if len(script) == 0 {
			return nil
		}
		err := s.script(strings.Join(script, "\n"), &out)
		script = nil
		return err
	}
	for _, l := range logicalLines(text) {
		if !keepRE.MatchString(l) {
			script = append(script, l)
			continue
		}
		if err := flush(); err != nil {
			return out.String(), err
		}
		if err := s.keep(l, &out); err != nil {
			return out.String(), err
		}
	}
	err := flush()
	return out.String(), err
}

// script runs text with bash -euo pipefail, and keeps the exports and the
// working directory it ends with, also when it fails.
func (s *shell) script(text string, out *bytes.Buffer) error {
	full := "set -euo pipefail\nsource " + quote(s.state) + "\n" +
		"trap '{ export -p; echo cd \"$(printf %q \"$PWD\")\"; } > " + quote(s.state) + "' EXIT\n" + text + "\n"
	// A file, not a pipe: what the block leaves in the background may
	// write on after the block, and must not die of a closed pipe.
	f, err := os.CreateTemp(s.scratch, "block-*.log")
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := s.command(ctx, full)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return err
	}
	s.groups = append(s.groups, cmd.Process.Pid)
	err = cmd.Wait()
	data, _ := os.ReadFile(f.Name())
	out.Write(data)
	if ctx.Err() != nil {
		return fmt.Errorf("did not finish within %v", blockTimeout)
	}
	return err
}

// keep starts line, a playground that stays up, and waits for the export
// line of its banner, which it then applies for the blocks after.
func (s *shell) keep(line string, out *bytes.Buffer) error {
	log := filepath.Join(s.scratch, fmt.Sprintf("keep-%d.log", len(s.keeps)))
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := s.command(context.Background(), "source "+quote(s.state)+"\nexec "+line+"\n")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return err
	}
	exited, done := make(chan error, 1), make(chan struct{})
	go func() { exited <- cmd.Wait(); close(done) }()
	s.keeps = append(s.keeps, keepProcess{cmd: cmd, done: done})
	deadline := time.After(blockTimeout)
	for {
		data, _ := os.ReadFile(log)
		if m := exportRE.FindSubmatch(data); m != nil {
			out.Write(data)
			return appendFile(s.state, string(m[1])+"\n")
		}
		select {
		case err := <-exited:
			data, _ := os.ReadFile(log)
			out.Write(data)
			return fmt.Errorf("%s ended (%v) before printing an export KUBECONFIG= line", line, err)
		case <-deadline:
			out.Write(data)
			return fmt.Errorf("%s printed no export KUBECONFIG= line within %v", line, blockTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *shell) command(ctx context.Context, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// stop ends what the doc left running: the playgrounds with Ctrl-C, as
// their banner says (they stop their cluster and remove its files), then
// every process group the blocks started.
func (s *shell) stop() {
	for _, k := range s.keeps {
		pid := k.cmd.Process.Pid
		_ = syscall.Kill(pid, syscall.SIGINT)
		select {
		case <-k.done:
		case <-time.After(time.Minute):
			s.t.Errorf("%v did not stop within a minute of Ctrl-C", k.cmd.Args)
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	for _, g := range s.groups {
		_ = syscall.Kill(-g, syscall.SIGTERM)
	}
	time.Sleep(time.Second)
	for _, g := range s.groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}

// logicalLines joins the lines a backslash continues, so that a command
// is seen whole.
func logicalLines(text string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(l)
			cur.WriteString("\n")
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
