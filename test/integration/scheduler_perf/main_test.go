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

// Package schedulerperf runs upstream's scheduler_perf harness
// (k8s.io/kubernetes/test/integration/scheduler_perf) with NodeLessPods in the
// plugin registry, on the workloads and profiles of performance-config.yaml.
// The harness starts etcd (found on PATH) and an in-process kube-apiserver
// for every workload. See doc/performance.md.
package schedulerperf

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

func TestMain(m *testing.M) {
	if err := etcdOnPath(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := perf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Without -data-items-dir the harness writes its JSON and .dat files
	// into the working directory, this source folder: use _output instead.
	if f := flag.Lookup("data-items-dir"); f != nil && f.Value.String() == "" {
		dir, err := filepath.Abs("../../../_output/scheduler_perf")
		if err == nil {
			err = f.Value.Set(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// etcdOnPath makes sure the harness finds etcd on PATH: when it is not there
// already, it adds KUBEBUILDER_ASSETS (set by make integration-test) or the
// repository's bin/ (where hack/install-envtest.sh builds it).
func etcdOnPath() error {
	if _, err := exec.LookPath("etcd"); err == nil {
		return nil
	}
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs("../../../bin")
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		return fmt.Errorf("scheduler_perf needs etcd on PATH or in %s: run hack/install-envtest.sh or make envtest", dir)
	}
	return os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
