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
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// TestMaintenanceWindowInstallRBAC applies the MaintenanceWindow
// controller's ServiceAccount and RBAC, from
// manifests/maintenancewindow-controller and from the chart
// (maintenanceController.enabled=true), to the API server, and runs
// bin/maintenancewindow-controller as their Deployment does (its flags,
// POD_NAMESPACE) with the ServiceAccount's own token:
//   - the chart and the kustomization grant the controller the same;
//   - it takes its Lease, taints a node whose annotation announces an open
//     window and sets MaintenanceInProgress=True on it, and records its
//     event on the node;
//   - it is refused nothing ("forbidden" in its log) and answers /healthz
//     on its secure port;
//   - calls outside its rules are forbidden (maintenanceControllerRefused).
func TestMaintenanceWindowInstallRBAC(t *testing.T) {
	const sourceNS = "adminsched-system"
	chartArgs := []string{"--set", "maintenanceController.enabled=true"}
	// The release name holds the chart's: the fullname is the release's.
	chartSA := chartRelease + "-maintenancewindow-controller"
	t.Run("chart and kustomize grant the same", func(t *testing.T) {
		want := checkSameGrants(t, kustomize(t, maintenanceControllerDir), renderChart(t, sourceNS, chartArgs...),
			sourceNS, "maintenancewindow-controller", chartSA)
		for _, p := range want {
			if strings.Contains(p.String(), "*") {
				t.Errorf("the controller is granted %s", p)
			}
		}
	})
	for _, tt := range []struct {
		source, sa string
		objs       func(ns string) []*unstructured.Unstructured
	}{
		{"kustomize", "maintenancewindow-controller", func(ns string) []*unstructured.Unstructured {
			return inNamespace(kustomize(t, maintenanceControllerDir), sourceNS, ns)
		}},
		{"chart", chartSA, func(ns string) []*unstructured.Unstructured { return renderChart(t, ns, chartArgs...) }},
	} {
		t.Run(tt.source, func(t *testing.T) {
			bin := maintenanceInstallBinary(t)
			tc := newTestContext(t)
			in := maintenanceControllerObjects(t, tt.objs(tc.ns))
			if sa := in.deployment.Spec.Template.Spec.ServiceAccountName; sa != tt.sa {
				t.Errorf("the Deployment runs as %q, want %q", sa, tt.sa)
			}
			tc.apply(in.rbac)
			tc.checkMaintenanceControllerRun(bin, in, tt.sa)
		})
	}
}

// checkMaintenanceControllerRun runs the controller as in's Deployment
// does, as ServiceAccount sa of the test's namespace (see
// TestMaintenanceWindowInstallRBAC).
func (tc *testContext) checkMaintenanceControllerRun(bin string, in *maintenanceControllerInstall, sa string) {
	t := tc.t
	t.Helper()
	// An annotation of this test's own, and no provider label or node
	// condition: the controller sees every node of the shared cluster, and
	// writes only on this test's.
	annotation := tc.ns + ".test.adminsched.io/maintenance-window"
	cfg := schedulerConfig(profile("MaintenanceWindow", 1, &v1config.MaintenanceWindowArgs{
		AnnotationKey:   ptr.To(annotation),
		ProviderSignals: ptr.To(false),
		NodeConditions:  ptr.To(false),
	}))
	configPath := testconfig.Write(t, cfg)
	kubeconfig := tc.serviceAccountKubeconfig(tc.ns, sa)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	c := in.deployment.Spec.Template.Spec.Containers[0]
	var args []string
	lease := ""
	for _, a := range append(c.Command[1:], c.Args...) {
		switch flag, value, _ := strings.Cut(a, "="); flag {
		case "--config":
			a = "--config=" + configPath
		case "--secure-port":
			a = fmt.Sprintf("--secure-port=%d", port)
		case "--leader-elect-resource-name":
			lease = value
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+kubeconfig, "--bind-address=127.0.0.1")
	for _, want := range []string{"run", "--leader-elect=true", "--leader-elect-resource-name=maintenancewindow-controller"} {
		if !strings.Contains(strings.Join(args, " "), want) {
			t.Errorf("the Deployment's command %v lacks %s", args, want)
		}
	}
	if lease == "" {
		lease = "maintenancewindow-controller"
	}

	now := time.Now().UTC()
	window := now.Add(-time.Minute).Format(time.RFC3339) + "/" + now.Add(time.Hour).Format(time.RFC3339)
	nodes := tc.createNodes(makeNode(tc.ns+"-open", withAnnotation(annotation, window)), makeNode(tc.ns+"-none"))

	cmd := exec.Command(bin, args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "POD_NAMESPACE=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "POD_NAMESPACE="+tc.ns)
	proc := tc.start("maintenancewindow-controller", cmd)
	checkHealthz(t, tc.ctx, proc, port)

	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		if proc.Exited() {
			return false, fmt.Errorf("it exited")
		}
		l, err := adminClient.CoordinationV1().Leases(tc.ns).Get(ctx, lease, metav1.GetOptions{})
		return err == nil && ptr.Deref(l.Spec.HolderIdentity, "") != "", nil
	})
	if err != nil {
		t.Fatalf("the controller did not take its Lease %s/%s: %v\n%s", tc.ns, lease, err, proc.Output())
	}
	var tainted, inProgress bool
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		node, err := adminClient.CoreV1().Nodes().Get(ctx, nodes[0], metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		tainted, inProgress = maintenanceMarked(node)
		return tainted && inProgress, nil
	})
	if err != nil {
		t.Errorf("node %s in its open window: taint %s:NoSchedule %v, %s=True %v: %v\n%s",
			nodes[0], maintenanceTaintKey, tainted, maintenanceInProgress, inProgress, err, proc.Output())
	}
	// Its event on the node, recorded asynchronously: a refused one would
	// be logged, so wait for it before reading the log.
	selector := fields.Set{"involvedObject.kind": "Node", "involvedObject.name": nodes[0], "reason": maintenanceWindowOpenedEvent}.String()
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		events, err := adminClient.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: selector})
		return err == nil && len(events.Items) > 0, nil
	})
	if err != nil {
		t.Errorf("no %s event on node %s: %v", maintenanceWindowOpenedEvent, nodes[0], err)
	}
	node, err := adminClient.CoreV1().Nodes().Get(tc.ctx, nodes[1], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tainted, inProgress := maintenanceMarked(node); tainted || inProgress {
		t.Errorf("node %s announces no window, yet has the taint (%v) or %s=True (%v)", nodes[1], tainted, maintenanceInProgress, inProgress)
	}
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the controller running as its ServiceAccount was refused %d times (first: %q): the RBAC misses something\n%s", len(lines), lines[0], proc.Output())
	}
	tc.checkForbidden("the controller's ServiceAccount", kubeconfig, maintenanceControllerRefused)
}
