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

// Package framework holds what the integration test packages
// (test/integration and test/integration/autoscaler) share, as upstream's
// k8s.io/kubernetes/test/integration/framework does: the control plane a
// package's TestMain starts (Main), binaries run as child processes for one
// test (StartProcess), and the manifests and CRDs tests install (Kustomize,
// InstallCRD) with what NodePoolQuota's tests share.
package framework

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before SIGKILL: the
// scheduler and the driver give up their leases within seconds.
var stopGrace = 30 * time.Second

// Process is a binary run as a child process for one test, as users run
// it. It collects the process's output; when the test ends it is stopped
// and, if the test failed, its output is logged.
type Process struct {
	// Name names the process in the test's log and errors.
	Name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	once sync.Once
}

// StartProcess starts cmd (its Path, Args, Env, Dir and SysProcAttr as the
// caller set them; stdout and stderr are collected). The process is stopped
// as Stop does when t ends, before cleanups registered earlier run (the
// cluster's, say); its output is logged then if t failed. The error is
// cmd.Start's: a caller may skip on it rather than fail.
func StartProcess(t testing.TB, name string, cmd *exec.Cmd) (*Process, error) {
	t.Helper()
	p := &Process{Name: name, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.Output())
		}
	})
	return p, nil
}

// Write collects the process's output (klog writes to stderr).
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Output is what the process wrote so far, stdout and stderr interleaved.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited says whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ProcessState is the exited process's state; nil while it runs.
func (p *Process) ProcessState() *os.ProcessState {
	if !p.Exited() {
		return nil
	}
	return p.cmd.ProcessState
}

// Stop sends SIGTERM, as a kubelet would, and waits for the process to
// end, killing it after a grace period. Later calls do nothing.
func (p *Process) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// Kill ends the process with SIGKILL, as a node's crash would, and waits
// for it; a later Stop does nothing.
func (p *Process) Kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}
