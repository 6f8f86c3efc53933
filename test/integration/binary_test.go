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

package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// schedulerBinary returns the path of the binary under test: SCHEDULER_BINARY,
// or bin/kube-scheduler, which make integration-test builds first.
func (tc *testContext) schedulerBinary() string {
	tc.t.Helper()
	path := os.Getenv("SCHEDULER_BINARY")
	if path == "" {
		path, _ = filepath.Abs("../../bin/kube-scheduler")
	}
	if _, err := os.Stat(path); err != nil {
		tc.t.Fatalf("this test runs the scheduler binary: build it with make build (or set SCHEDULER_BINARY): %v", err)
	}
	return path
}

// runBinary starts the scheduler binary with args; it is stopped when the
// test ends, and its output is logged if the test failed.
func (tc *testContext) runBinary(name string, args ...string) *framework.Process {
	tc.t.Helper()
	return tc.startProcess(name, tc.schedulerBinary(), args...)
}

// startProcess starts binary with args, as runBinary does.
func (tc *testContext) startProcess(name, binary string, args ...string) *framework.Process {
	tc.t.Helper()
	return tc.start(name, exec.Command(binary, args...))
}

// start starts cmd; it is stopped when the test ends, and its output is
// logged if the test failed.
func (tc *testContext) start(name string, cmd *exec.Cmd) *framework.Process {
	tc.t.Helper()
	p, err := framework.StartProcess(tc.t, name, cmd)
	if err != nil {
		tc.t.Fatalf("starting %s: %v", name, err)
	}
	return p
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// servingArgs returns flags for the HTTPS endpoint on a free local port.
func (tc *testContext) servingArgs() ([]string, int) {
	tc.t.Helper()
	port, err := freePort()
	if err != nil {
		tc.t.Fatal(err)
	}
	return []string{
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + tc.t.TempDir(),
	}, port
}
