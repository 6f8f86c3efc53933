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

import "time"

// Process is a program StartProcess runs beside the cluster's own.
type Process struct {
	p *process
}

// StartProcess runs binary with args, and env (NAME=value) added to this
// program's environment, as one more program of the cluster: its output
// goes to <logDir>/<name>.log, Err reports it if it exits, and Stop stops
// it before the programs started earlier (Karpenter, say, before KWOK and
// the API server it needs to stop cleanly).
func (cp *ControlPlane) StartProcess(logDir, name, binary string, env []string, args ...string) (*Process, error) {
	p, err := cp.run(logDir, name, binary, env, args...)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, p)
	return &Process{p: p}, nil
}

// Stop sends SIGTERM and kills the process after grace; once stopped, its
// exit is not an error of Err's. Stopping it again does nothing.
func (p *Process) Stop(grace time.Duration) error {
	return p.p.stop(grace)
}

// Err is nil while the process runs or after Stop, and otherwise says how
// it exited, with the end of its log.
func (p *Process) Err() error {
	return p.p.exitErr()
}

// Log is the path of the process's log file.
func (p *Process) Log() string {
	return p.p.log
}
