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
// minutes, and TestDeschedulerConsolidation, the real descheduler emptying
// nodes for Karpenter, about 4 minutes), which CI does not run.
package autoscaler

import (
	"context"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

var (
	cluster *framework.Cluster
	kp      *karpenter.Karpenter
	client  kubernetes.Interface
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Setup{
		Name:        "autoscaler-tests",
		BinDir:      "../../../bin",
		KeepLogsEnv: "AUTOSCALER_KEEP_LOGS",
		Start:       startKarpenter,
	}))
}

// startKarpenter starts Karpenter on the cluster, with the NodeClass every
// test's NodePools name.
func startKarpenter(ctx context.Context, c *framework.Cluster) error {
	if err := karpenter.CheckAssets(c.Assets); err != nil {
		return err
	}
	cluster = c
	client = kubernetes.NewForConfigOrDie(c.Config)
	var err error
	if kp, err = karpenter.Start(ctx, c.ControlPlane, c.Assets, c.LogDir); err != nil {
		return err
	}
	return kp.CreateNodeClass(ctx)
}
