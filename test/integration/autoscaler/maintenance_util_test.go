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

package autoscaler

import (
	"os"
	"os/exec"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// What the maintenancewindow-controller writes on a node in its open window,
// spelled out rather than imported: these are its contract with Karpenter,
// the descheduler's policy and admins, and a change must fail here.
const (
	controllerTaintValue           = "maintenancewindow-controller"
	conditionMaintenanceInProgress = "MaintenanceInProgress"
)

// startMaintenanceController runs the maintenancewindow-controller binary
// (MAINTENANCE_CONTROLLER_BINARY, else bin/maintenancewindow-controller)
// on the scheduler's config cfg until the test ends, without leader
// election or a serving port; its output is logged if the test failed.
func (tc *testContext) startMaintenanceController(cfg *configv1.KubeSchedulerConfiguration) *framework.Process {
	tc.t.Helper()
	bin := os.Getenv("MAINTENANCE_CONTROLLER_BINARY")
	if bin == "" {
		bin, _ = filepath.Abs("../../../bin/maintenancewindow-controller")
	}
	if _, err := os.Stat(bin); err != nil {
		tc.t.Fatalf("this test runs the maintenancewindow-controller binary: build it with `go build -o bin/maintenancewindow-controller ./cmd/maintenancewindow-controller` (or set MAINTENANCE_CONTROLLER_BINARY): %v", err)
	}
	cmd := exec.Command(bin, "run", "--config="+testconfig.Write(tc.t, cfg),
		"--kubeconfig="+cluster.KubeconfigPath, "--leader-elect=false", "--http-address=", "--v=2")
	proc, err := framework.StartProcess(tc.t, "the maintenancewindow-controller", cmd)
	if err != nil {
		tc.t.Fatalf("starting %s: %v", bin, err)
	}
	return proc
}

// hasControllerTaint says whether n carries the controller's NoSchedule
// taint: the window's key, the controller's marker as the value.
func hasControllerTaint(n *v1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == maintenanceAnnotation && t.Value == controllerTaintValue && t.Effect == v1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

// nodeConditionTrue says whether n's condition typ is True.
func nodeConditionTrue(n *v1.Node, typ v1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
