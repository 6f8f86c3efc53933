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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	maintenanceControllerDir = "../../manifests/maintenancewindow-controller"
	// maintenanceTaintKey and the condition are what the controller writes
	// on a node in its open window (NoSchedule, True).
	maintenanceTaintKey          = "scheduling.adminsched.io/maintenance-window"
	maintenanceInProgress        = "MaintenanceInProgress"
	maintenanceWindowOpenedEvent = "MaintenanceWindowOpened"
)

// maintenanceControllerInstall is what a rendering (kustomize or the chart)
// holds of the MaintenanceWindow controller.
type maintenanceControllerInstall struct {
	deployment *appsv1.Deployment
	// rbac: the ServiceAccount, roles and bindings.
	rbac []*unstructured.Unstructured
}

// maintenanceControllerObjects picks the controller's objects of objs
// (their names hold "maintenancewindow-controller"); it fails the test
// without a Deployment.
func maintenanceControllerObjects(t testing.TB, objs []*unstructured.Unstructured) *maintenanceControllerInstall {
	t.Helper()
	in := &maintenanceControllerInstall{}
	for _, o := range objs {
		if !strings.Contains(o.GetName(), "maintenancewindow-controller") {
			continue // the chart's scheduler
		}
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			in.rbac = append(in.rbac, o)
		case "Deployment":
			in.deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, in.deployment); err != nil {
				t.Fatal(err)
			}
		}
	}
	if in.deployment == nil {
		t.Fatal("no Deployment of the MaintenanceWindow controller")
	}
	return in
}

// maintenanceControllerRefused: what the controller's rules do not grant.
// It writes nodes with update and update of their status, never patch.
var maintenanceControllerRefused = map[string]forbiddenCall{
	"delete a node": onDemandShareControllerRefused["delete a node"],
	"create a node": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		_, err := c.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "refused-node"}}, metav1.CreateOptions{})
		return err
	},
	"patch a node": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, "any-node", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
		return err
	},
	"patch a node's status": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, "any-node", types.MergePatchType, []byte(`{"status":{"conditions":[]}}`), metav1.PatchOptions{}, "status")
		return err
	},
	"patch a pod": onDemandShareControllerRefused["patch a pod"],
	"list pods": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	},
	"list secrets": onDemandShareControllerRefused["list secrets"],
	"update a Deployment": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.AppsV1().Deployments(ns).Update(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}, metav1.UpdateOptions{})
		return err
	},
	"get another Lease": onDemandShareControllerRefused["get another Lease"],
	"create a Lease in another namespace": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		_, err := c.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "maintenancewindow-controller"}}, metav1.CreateOptions{})
		return err
	},
	"read the ConfigMaps": deschedulerRefused["read the ConfigMaps"],
}

// maintenanceInstallBinary returns bin/maintenancewindow-controller
// (MAINTENANCE_CONTROLLER_BINARY overrides it).
func maintenanceInstallBinary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("MAINTENANCE_CONTROLLER_BINARY")
	if path == "" {
		path, _ = filepath.Abs("../../bin/maintenancewindow-controller")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("this test runs the MaintenanceWindow controller's binary: build it with "+
			"`go build -o bin/maintenancewindow-controller ./cmd/maintenancewindow-controller` "+
			"(or set MAINTENANCE_CONTROLLER_BINARY): %v", err)
	}
	return path
}

// maintenanceMarked reports whether node carries the controller's marks of
// an open window: the NoSchedule taint and MaintenanceInProgress=True.
func maintenanceMarked(node *v1.Node) (tainted, inProgress bool) {
	for _, taint := range node.Spec.Taints {
		tainted = tainted || (taint.Key == maintenanceTaintKey && taint.Effect == v1.TaintEffectNoSchedule)
	}
	for _, c := range node.Status.Conditions {
		inProgress = inProgress || (string(c.Type) == maintenanceInProgress && c.Status == v1.ConditionTrue)
	}
	return tainted, inProgress
}

// checkSameGrants fails the test unless the ServiceAccount sa of the
// kustomization and chartSA of the chart, both rendered in namespace ns,
// are granted the same (the namespace renamed), and something; it returns
// the kustomization's grants.
func checkSameGrants(t *testing.T, kustomized, chart []*unstructured.Unstructured, ns, sa, chartSA string) []scopedPermission {
	t.Helper()
	rename := map[string]string{ns: "<namespace>"}
	want := grantsOf(t, kustomized, ns, sa, rename)
	got := grantsOf(t, chart, ns, chartSA, rename)
	if len(want) == 0 {
		t.Fatal("the kustomization grants its ServiceAccount nothing")
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(scopedPermission{}, permission{})); diff != "" {
		t.Errorf("the chart's grants differ from the kustomization's (-kustomize +chart):\n%s", diff)
	}
	return want
}
