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

// Package autoscaler runs our scheduler next to a real Karpenter (its KWOK
// cloud provider, internal/localcluster/karpenter) on a local cluster of its
// own: Karpenter adds a node for every pending pod it can fit, so it must
// not run in the cluster test/integration shares between its tests. The
// cluster starts with no node; each test creates its NodePools and, when
// it ends, removes them and waits until every node Karpenter made is gone.
// Tests run one after the other. AUTOSCALER_LONG=1 adds the long variants
// (TestConsolidationNodesSaved under WhenEmptyOrUnderutilized, about 8
// minutes), which CI does not run.
package autoscaler

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
)

var (
	cluster *localcluster.ControlPlane
	kp      *karpenter.Karpenter
	client  kubernetes.Interface
	// logDir holds the cluster's and Karpenter's logs; kept when a test
	// failed, or when AUTOSCALER_KEEP_LOGS is set.
	logDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	assets, err := localcluster.AssetsFromEnv("../../../bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := karpenter.CheckAssets(assets); err != nil {
		fmt.Fprintf(os.Stderr, "autoscaler tests: %v\n", err)
		return 1
	}
	if logDir, err = os.MkdirTemp("", "autoscaler-integration-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if code == 0 && os.Getenv("AUTOSCALER_KEEP_LOGS") == "" {
			_ = os.RemoveAll(logDir)
		} else {
			fmt.Fprintf(os.Stderr, "autoscaler tests: the logs of the cluster and Karpenter are in %s\n", logDir)
		}
	}()
	start := time.Now()
	if cluster, err = localcluster.Start(assets, logDir); err != nil {
		fmt.Fprintf(os.Stderr, "autoscaler tests: %v\n", err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}()
	client = kubernetes.NewForConfigOrDie(cluster.Config)
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), klog.Background()), 3*time.Minute)
	defer cancel()
	if kp, err = karpenter.Start(ctx, cluster, assets, logDir); err != nil {
		fmt.Fprintf(os.Stderr, "autoscaler tests: %v\n", err)
		return 1
	}
	if err := kp.CreateNodeClass(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "autoscaler tests: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "autoscaler tests: cluster and Karpenter ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}
