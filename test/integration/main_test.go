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
	"context"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/adminsched/scheduler-plugins/test/integration/framework"
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
	os.Exit(framework.Main(m, framework.Setup{
		Name:    "integration-tests",
		BinDir:  "../../bin",
		Options: podGroupAPI,
		Start: func(_ context.Context, c *framework.Cluster) error {
			adminConfig = c.Config
			adminClient = kubernetes.NewForConfigOrDie(c.Config)
			adminKubeconfig = c.KubeconfigPath
			return nil
		},
	}))
}
