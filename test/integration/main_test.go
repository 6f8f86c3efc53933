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

// Package integration runs our scheduler against one shared local cluster
// (internal/localcluster): etcd, kube-apiserver, kube-controller-manager
// with the workload controllers, the garbage collector and the namespace
// controller, and KWOK as every node's kubelet (bound pods go Running,
// deleted pods go away), built from go.mod by hack/install-envtest.sh. No
// other scheduler runs. Tests create pods directly or through workloads,
// whose pods the controllers make.
package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

var (
	// adminConfig reaches the API server as a cluster admin.
	adminConfig *rest.Config
	// adminClient is a clientset on adminConfig.
	adminClient kubernetes.Interface
	// adminKubeconfig is a kubeconfig file for adminConfig, for schedulers
	// started from a config file.
	adminKubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	assets, err := localcluster.AssetsFromEnv("../../bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "nodelesspods-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	cp, err := localcluster.Start(assets, dir, podGroupAPI...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration tests: %v\n", err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}()
	adminConfig = cp.Config
	adminClient = kubernetes.NewForConfigOrDie(cp.Config)
	adminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(adminKubeconfig, cp.KubeConfig, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
