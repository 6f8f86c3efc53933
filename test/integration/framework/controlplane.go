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
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

// startTimeout bounds Setup.Start (Karpenter waits for its readiness).
const startTimeout = 3 * time.Minute

// Setup is the control plane a test package shares between its tests.
type Setup struct {
	// Name names the tests in messages and the log directory.
	Name string
	// BinDir is the repository's bin/, relative to the package, where make
	// envtest builds the binaries: used when KUBEBUILDER_ASSETS is unset.
	BinDir string
	// Options are the control plane's (what else the API server serves).
	Options []localcluster.Option
	// KeepLogsEnv, if not empty, names an environment variable that keeps
	// the logs of a run that passed too.
	KeepLogsEnv string
	// Start, if not nil, runs once the control plane serves, before the
	// tests: it keeps what the tests use and starts what else they need.
	Start func(ctx context.Context, c *Cluster) error
}

// Cluster is the running control plane, with where it came from.
type Cluster struct {
	*localcluster.ControlPlane
	// Assets is the directory of the binaries (etcd, kube-apiserver, ...).
	Assets string
	// LogDir holds the components' logs and the admin kubeconfig.
	LogDir string
}

// Main starts the control plane of s, runs the tests and stops it; it
// returns the exit code for TestMain's os.Exit. The logs stay, and their
// directory is printed, when the tests failed (or s.KeepLogsEnv is set).
func Main(m *testing.M, s Setup) (code int) {
	assets, err := localcluster.AssetsFromEnv(s.BinDir)
	if err != nil {
		return failed(s.Name, err)
	}
	dir, err := os.MkdirTemp("", s.Name+"-")
	if err != nil {
		return failed(s.Name, err)
	}
	defer func() { keepLogs(s, dir, code) }()
	start := time.Now()
	cp, err := localcluster.Start(assets, dir, s.Options...)
	if err != nil {
		return failed(s.Name, err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping the control plane: %v\n", s.Name, err)
		}
	}()
	if s.Start != nil {
		ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), klog.Background()), startTimeout)
		err := s.Start(ctx, &Cluster{ControlPlane: cp, Assets: assets, LogDir: dir})
		cancel()
		if err != nil {
			return failed(s.Name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "%s: cluster ready in %s\n", s.Name, time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}

// failed reports err of the set-up; the tests do not run.
func failed(name string, err error) int {
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	return 1
}

// keepLogs removes dir after a run that passed, unless s.KeepLogsEnv is
// set; otherwise it says where the logs are.
func keepLogs(s Setup, dir string, code int) {
	if code == 0 && (s.KeepLogsEnv == "" || os.Getenv(s.KeepLogsEnv) == "") {
		_ = os.RemoveAll(dir)
		return
	}
	fmt.Fprintf(os.Stderr, "%s: the logs of the cluster are in %s\n", s.Name, dir)
}
