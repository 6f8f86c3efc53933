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

// Package harness starts upstream's scheduler_perf harness
// (k8s.io/kubernetes/test/integration/scheduler_perf) for this repository's
// scheduler_perf test packages: etcd from the repository's bin/, the
// harness's flags, and its data files under _output rather than in the
// source folder.
package harness

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// Main prepares the harness and runs the tests; it returns the exit code
// for TestMain's os.Exit. binDir is where make envtest builds etcd and
// dataDir where the harness writes its JSON and .dat files unless
// -data-items-dir says otherwise; both are relative to the test's package.
func Main(m *testing.M, binDir, dataDir string) int {
	if err := etcdOnPath(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := perf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// m.Run parses the flags after this: an explicit -data-items-dir
	// still wins over this default.
	if f := flag.Lookup("data-items-dir"); f != nil && f.Value.String() == "" {
		dir, err := filepath.Abs(dataDir)
		if err == nil {
			err = f.Value.Set(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// etcdOnPath makes sure the harness finds etcd on PATH: when it is not there
// already, it adds KUBEBUILDER_ASSETS (set by make integration-test) or
// binDir.
func etcdOnPath(binDir string) error {
	if _, err := exec.LookPath("etcd"); err == nil {
		return nil
	}
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs(binDir)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		return fmt.Errorf("scheduler_perf needs etcd on PATH or in %s: run make envtest", dir)
	}
	return os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
