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

package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// process is a program of the cluster run in the background, its output in
// <logDir>/<name>.log.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}

	mu       sync.Mutex
	err      error // how it exited, once done is closed
	stopping bool
}

func (cp *ControlPlane) start(assets, logDir, name string, args ...string) (*process, error) {
	p, err := cp.run(logDir, name, filepath.Join(assets, name), nil, args...)
	if err != nil {
		return nil, fmt.Errorf("%w\nrebuild the binaries with `make envtest`", err)
	}
	return p, nil
}

// run starts bin with args, env added to ours, its output in
// <logDir>/<name>.log.
func (cp *ControlPlane) run(logDir, name, bin string, env []string, args ...string) (*process, error) {
	f, err := cp.createLog(logDir, name+".log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(append(os.Environ(), "GOGC="+gcPercent), env...)
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p := &process{name: name, log: f.Name(), cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// exitErr says how the process exited when it exited without being asked.
func (p *process) exitErr() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return nil
	}
	return fmt.Errorf("%s exited (%v); the end of %s: %s", p.name, p.err, p.log, tail(p.log))
}

// stop asks the process to terminate and kills it after grace.
func (p *process) stop(grace time.Duration) error {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return nil
}
