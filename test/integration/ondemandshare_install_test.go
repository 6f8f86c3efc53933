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
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	odsadmission "github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const onDemandShareDir = "../../manifests/ondemandshare-controller"

// TestOnDemandShareInstallRBAC applies the controller's ServiceAccount and
// RBAC, from manifests/ondemandshare-controller and from the chart, to the
// API server, and runs bin/ondemandshare-controller as their Deployment
// does (its flags, POD_NAMESPACE) with the ServiceAccount's own token:
//   - it takes its Lease, server-side applies the admission policy of the
//     config and decides the two pods of a Deployment that policy gated,
//     one on-demand and one spot at 50%;
//   - it is refused nothing ("forbidden" in its log) and answers /healthz
//     on its secure port;
//   - calls outside its rules are forbidden;
//   - the chart and the kustomization grant the same.
func TestOnDemandShareInstallRBAC(t *testing.T) {
	if !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		// The shared cluster does not turn on 1.35's beta API.
		t.Skipf("%s", kubeversion.Unavailable(kubeversion.MutatingAdmissionPolicyV1).Error())
	}
	const sourceNS = "adminsched-system"
	kustomized := kustomize(t, onDemandShareDir)
	chartArgs := []string{"--set", "onDemandShare.controller.enabled=true"}
	// The release name holds the chart's: the fullname is the release's.
	chartSA := chartRelease + "-ondemandshare-controller"
	t.Run("chart and kustomize grant the same", func(t *testing.T) {
		rename := map[string]string{sourceNS: "<namespace>"}
		want := grantsOf(t, kustomized, sourceNS, "ondemandshare-controller", rename)
		got := grantsOf(t, renderChart(t, sourceNS, chartArgs...), sourceNS, chartSA, rename)
		if len(want) == 0 {
			t.Fatal("the kustomization grants its ServiceAccount nothing")
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(scopedPermission{}, permission{})); diff != "" {
			t.Errorf("the chart's grants differ from manifests/ondemandshare-controller's (-kustomize +chart):\n%s", diff)
		}
	})
	for _, tt := range []struct {
		source string
		sa     string
		objs   func(ns string) []*unstructured.Unstructured
	}{
		{"kustomize", "ondemandshare-controller", func(ns string) []*unstructured.Unstructured {
			return inNamespace(kustomize(t, onDemandShareDir), sourceNS, ns)
		}},
		{"chart", chartSA, func(ns string) []*unstructured.Unstructured { return renderChart(t, ns, chartArgs...) }},
	} {
		t.Run(tt.source, func(t *testing.T) {
			tc := newTestContext(t)
			objs := tt.objs(tc.ns)
			var deployment *appsv1.Deployment
			var rbac []*unstructured.Unstructured
			for _, o := range objs {
				if !strings.Contains(o.GetName(), "ondemandshare-controller") {
					continue // the chart's scheduler
				}
				switch o.GetKind() {
				case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
					rbac = append(rbac, o)
				case "Deployment":
					deployment = &appsv1.Deployment{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, deployment); err != nil {
						t.Fatal(err)
					}
				}
			}
			if deployment == nil {
				t.Fatalf("%s renders no Deployment of the controller", tt.source)
			}
			tc.apply(rbac)
			tc.checkOnDemandShareRun(deployment, tt.sa)
		})
	}
}

// checkOnDemandShareRun runs the controller as deployment's container does,
// as ServiceAccount sa of the test's namespace (see
// TestOnDemandShareInstallRBAC).
func (tc *testContext) checkOnDemandShareRun(deployment *appsv1.Deployment, sa string) {
	t := tc.t
	t.Helper()
	name := "inst-" + rand.String(5)
	cfg := schedulerConfig(configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		PluginConfig: []configv1.PluginConfig{testconfig.Args("OnDemandShare", &v1config.OnDemandShareArgs{Policies: []v1config.OnDemandSharePolicy{{
			Name: name, Namespaces: []string{tc.ns}, MinOnDemandPercent: ptr.To[int32](50),
		}}})},
	})
	configPath := testconfig.Write(t, cfg)
	t.Cleanup(func() {
		meta := metav1.ObjectMeta{Name: odsadmission.NamePrefix + name}
		pair := admissionpolicy.Pair{Policy: &admissionpolicy.MutatingAdmissionPolicy{ObjectMeta: meta},
			Binding: &admissionpolicy.MutatingAdmissionPolicyBinding{ObjectMeta: meta}}
		if err := admissionpolicy.Delete(context.Background(), adminClient, []admissionpolicy.Pair{pair}); err != nil {
			t.Errorf("deleting the admission policy: %v", err)
		}
	})
	kubeconfig := tc.serviceAccountKubeconfig(tc.ns, sa)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	c := deployment.Spec.Template.Spec.Containers[0]
	if deployment.Spec.Template.Spec.ServiceAccountName != sa {
		t.Errorf("the Deployment runs as %q, want %q", deployment.Spec.Template.Spec.ServiceAccountName, sa)
	}
	var args []string
	for _, a := range append(c.Command[1:], c.Args...) {
		switch flag, _, _ := strings.Cut(a, "="); flag {
		case "--config":
			a = "--config=" + configPath
		case "--secure-port":
			a = fmt.Sprintf("--secure-port=%d", port)
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+kubeconfig, "--bind-address=127.0.0.1")
	for _, want := range []string{"run", "--apply-admission-policies=true", "--leader-elect=true"} {
		if !strings.Contains(strings.Join(args, " "), want) {
			t.Errorf("the Deployment's command %v lacks %s", args, want)
		}
	}
	cmd := exec.Command(onDemandShareBinary(t), args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "POD_NAMESPACE=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "POD_NAMESPACE="+tc.ns)
	proc := tc.start("ondemandshare-controller", cmd)
	checkHealthz(t, tc.ctx, proc, port)

	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		b, err := admissionpolicy.Client(adminClient).MutatingAdmissionPolicyBindings().Get(ctx, odsadmission.NamePrefix+name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, f := range b.ManagedFields {
			if f.Manager == "ondemandshare-controller" && f.Operation == metav1.ManagedFieldsOperationApply {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the controller did not apply its admission policy: %v\n%s", err, proc.Output())
	}
	lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, "ondemandshare-controller", metav1.GetOptions{})
	if err != nil || ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		t.Errorf("the controller's Lease %s/ondemandshare-controller: %v (holder %v)", tc.ns, err, lease)
	}
	if err := odsadmission.Renderer.WaitInForce(tc.ctx, adminClient, tc.ns, waitTimeout); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: tc.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{SchedulerName: schedulerName, Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}},
		},
	}
	if _, err := adminClient.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := adminClient.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, nil
		}
		classes = map[string]int{}
		for _, p := range pods.Items {
			if len(p.Spec.SchedulingGates) > 0 || p.Labels[share.PolicyLabel] != name {
				return false, nil
			}
			classes[p.Labels[share.ClassLabel]]++
		}
		return len(pods.Items) == 2, nil
	})
	if err != nil || classes[string(share.OnDemand)] != 1 || classes[string(share.Spot)] != 1 {
		t.Errorf("the Deployment's pods were not decided one on-demand, one spot: %v (classes %v)\n%s", err, classes, proc.Output())
	}
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the controller running as its ServiceAccount was refused %d times (first: %q): the RBAC misses something", len(lines), lines[0])
	}
	tc.checkOnDemandShareForbidden(kubeconfig)
}

// checkOnDemandShareForbidden: what the controller's rules do not grant is
// refused to its token.
func (tc *testContext) checkOnDemandShareForbidden(kubeconfig string) {
	t := tc.t
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := tc.ctx
	for what, call := range map[string]func() error{
		"list secrets": func() error {
			_, err := client.CoreV1().Secrets(tc.ns).List(ctx, metav1.ListOptions{})
			return err
		},
		"delete a node": func() error {
			return client.CoreV1().Nodes().Delete(ctx, "any-node", metav1.DeleteOptions{})
		},
		"delete a Deployment": func() error {
			return client.AppsV1().Deployments(tc.ns).Delete(ctx, "web", metav1.DeleteOptions{})
		},
		"create a pod": func() error {
			_, err := client.CoreV1().Pods(tc.ns).Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}, metav1.CreateOptions{})
			return err
		},
		"get another Lease": func() error {
			_, err := client.CoordinationV1().Leases(tc.ns).Get(ctx, "kube-scheduler", metav1.GetOptions{})
			return err
		},
		"delete a ValidatingAdmissionPolicy": func() error {
			return client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, "any", metav1.DeleteOptions{})
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s as the controller's ServiceAccount: %v, want forbidden", what, err)
		}
	}
}

// inNamespace moves objs from namespace from to to, in their metadata and
// their RBAC subjects, and returns them.
func inNamespace(objs []*unstructured.Unstructured, from, to string) []*unstructured.Unstructured {
	for _, c := range objs {
		if c.GetNamespace() == from {
			c.SetNamespace(to)
		}
		subjects, _, _ := unstructured.NestedSlice(c.Object, "subjects")
		for _, s := range subjects {
			if m := s.(map[string]any); m["namespace"] == from {
				m["namespace"] = to
			}
		}
		if subjects != nil {
			c.Object["subjects"] = subjects
		}
	}
	return objs
}

// onDemandShareBinary returns bin/ondemandshare-controller, which make build
// builds (ONDEMANDSHARE_CONTROLLER_BINARY overrides it).
func onDemandShareBinary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("ONDEMANDSHARE_CONTROLLER_BINARY")
	if path == "" {
		path, _ = filepath.Abs("../../bin/ondemandshare-controller")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("this test runs the controller's binary: build it with make build (or set ONDEMANDSHARE_CONTROLLER_BINARY): %v", err)
	}
	return path
}
