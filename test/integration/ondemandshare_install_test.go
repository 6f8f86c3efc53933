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
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
//   - the admission policy of the config is applied first: for the chart
//     by its post-install hook Job's command, with the hook ServiceAccount's
//     token and RBAC; for the kustomization by the admin, as its README says;
//   - it takes its Lease and decides the two pods of a Deployment that
//     policy gated, one on-demand and one spot at 50%;
//   - it is refused nothing ("forbidden" in its log) and answers /healthz
//     on its secure port;
//   - calls outside its rules, admission policies included, are forbidden;
//   - the chart's pre-delete hook Job's command deletes the policy with the
//     hook's token, which is refused the rest;
//   - the chart and the kustomization grant the controller the same.
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
			hooks := &onDemandShareHooks{jobs: map[string]*batchv1.Job{}}
			for _, o := range objs {
				switch {
				case strings.Contains(o.GetName(), "ondemandshare-controller"):
				case strings.Contains(o.GetName(), "ondemandshare-admission"):
					hooks.add(t, o)
					continue
				default:
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
			if tt.source == "kustomize" {
				hooks = nil // the admin applies the policies
			} else {
				hooks.check(t)
				tc.apply(hooks.rbac)
			}
			tc.apply(rbac)
			tc.checkOnDemandShareRun(deployment, tt.sa, hooks)
		})
	}
}

// checkOnDemandShareRun runs the controller as deployment's container does,
// as ServiceAccount sa of the test's namespace (see
// TestOnDemandShareInstallRBAC).
func (tc *testContext) checkOnDemandShareRun(deployment *appsv1.Deployment, sa string, hooks *onDemandShareHooks) {
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
	for _, want := range []string{"run", "--leader-elect=true"} {
		if !strings.Contains(strings.Join(args, " "), want) {
			t.Errorf("the Deployment's command %v lacks %s", args, want)
		}
	}
	hookKubeconfig := adminKubeconfig
	if hooks != nil {
		hookKubeconfig = tc.serviceAccountKubeconfig(tc.ns, hooks.sa)
	}
	tc.runRender(hooks.command("apply"), configPath, hookKubeconfig)
	cmd := exec.Command(onDemandShareBinary(t), args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "POD_NAMESPACE=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "POD_NAMESPACE="+tc.ns)
	proc := tc.start("ondemandshare-controller", cmd)
	checkHealthz(t, tc.ctx, proc, port)

	// It decides nothing before it leads.
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(ctx, "ondemandshare-controller", metav1.GetOptions{})
		return err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") != "", nil
	})
	if err != nil {
		t.Errorf("the controller did not take its Lease %s/ondemandshare-controller: %v\n%s", tc.ns, err, proc.Output())
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
	tc.checkForbidden("the controller's ServiceAccount", kubeconfig, onDemandShareControllerRefused)
	tc.runRender(hooks.command("delete"), configPath, hookKubeconfig)
	_, err = admissionpolicy.Client(adminClient).MutatingAdmissionPolicies().Get(tc.ctx, odsadmission.NamePrefix+name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("render --delete kept the admission policy: %v", err)
	}
	if hooks != nil {
		tc.checkForbidden("the hook's ServiceAccount", hookKubeconfig, map[string]forbiddenCall{
			"list pods": func(ctx context.Context, c kubernetes.Interface, ns string) error {
				_, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
				return err
			},
			"list secrets":                       onDemandShareControllerRefused["list secrets"],
			"delete a ValidatingAdmissionPolicy": onDemandShareControllerRefused["delete a ValidatingAdmissionPolicy"],
		})
	}
}

// forbiddenCall is an API call that a ServiceAccount must be refused.
type forbiddenCall func(ctx context.Context, client kubernetes.Interface, ns string) error

// onDemandShareControllerRefused: what the controller's rules do not grant.
var onDemandShareControllerRefused = map[string]forbiddenCall{
	"list secrets": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		return err
	},
	"delete a node": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		return c.CoreV1().Nodes().Delete(ctx, "any-node", metav1.DeleteOptions{})
	},
	"delete a Deployment": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		return c.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{})
	},
	"create a pod": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.CoreV1().Pods(ns).Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}, metav1.CreateOptions{})
		return err
	},
	// It writes a decision as one resourceVersion-guarded update.
	"patch a pod": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.CoreV1().Pods(ns).Patch(ctx, "any-pod", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
		return err
	},
	"get another Lease": func(ctx context.Context, c kubernetes.Interface, ns string) error {
		_, err := c.CoordinationV1().Leases(ns).Get(ctx, "kube-scheduler", metav1.GetOptions{})
		return err
	},
	"delete a ValidatingAdmissionPolicy": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		return c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, "any", metav1.DeleteOptions{})
	},
	// The hook Jobs apply the admission policies: a MAP can mutate any pod.
	"create a MutatingAdmissionPolicy": func(ctx context.Context, c kubernetes.Interface, _ string) error {
		meta := odsadmission.Renderer.ObjectMeta("refused", map[string]string{share.PolicyLabel: "refused"}, nil)
		pair := admissionpolicy.PodPolicy{Meta: meta, Patches: []string{"true ? [] : [JSONPatch{op: 'test', path: '/kind', value: 'Pod'}]"}, FailurePolicy: admissionpolicy.Ignore}.Render()
		_, err := admissionpolicy.Client(c).MutatingAdmissionPolicies().Create(ctx, pair.Policy, metav1.CreateOptions{})
		return err
	},
}

// checkForbidden: each call is refused to the token of kubeconfig (who).
func (tc *testContext) checkForbidden(who, kubeconfig string, calls map[string]forbiddenCall) {
	t := tc.t
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	for what, call := range calls {
		if err := call(tc.ctx, client, tc.ns); !apierrors.IsForbidden(err) {
			t.Errorf("%s as %s: %v, want forbidden", what, who, err)
		}
	}
}

// onDemandShareHooks are the chart's admission-policy hook objects: the
// ServiceAccount, its RBAC and the Jobs by their command's action.
type onDemandShareHooks struct {
	sa   string
	rbac []*unstructured.Unstructured
	jobs map[string]*batchv1.Job // "apply", "delete"
}

// add files a hook object o.
func (h *onDemandShareHooks) add(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	switch o.GetKind() {
	case "ServiceAccount":
		h.sa = o.GetName()
		h.rbac = append(h.rbac, o)
	case "ClusterRole", "ClusterRoleBinding":
		h.rbac = append(h.rbac, o)
	case "Job":
		job := &batchv1.Job{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, job); err != nil {
			t.Fatal(err)
		}
		h.jobs[strings.TrimPrefix(job.Spec.Template.Spec.Containers[0].Command[3], "--")] = job
	default:
		t.Errorf("the chart renders an unexpected hook object %s %s", o.GetKind(), o.GetName())
	}
}

// check: each Job runs at its hook, as the hook's ServiceAccount, after
// its RBAC (a lower weight), and Helm deletes them all once they succeeded.
func (h *onDemandShareHooks) check(t *testing.T) {
	t.Helper()
	if h.sa == "" || len(h.rbac) != 3 {
		t.Fatalf("the chart's hook renders ServiceAccount %q and %d RBAC objects, want a ServiceAccount, a ClusterRole and its binding", h.sa, len(h.rbac))
	}
	for action, hook := range map[string]string{"apply": "post-install,post-upgrade", "delete": "pre-delete"} {
		job := h.jobs[action]
		if job == nil {
			t.Fatalf("the chart renders no hook Job that runs render --%s", action)
		}
		if got := job.Annotations["helm.sh/hook"]; got != hook {
			t.Errorf("Job %s runs at hook %q, want %q", job.Name, got, hook)
		}
		if job.Spec.Template.Spec.ServiceAccountName != h.sa {
			t.Errorf("Job %s runs as %q, want %q", job.Name, job.Spec.Template.Spec.ServiceAccountName, h.sa)
		}
		jobWeight, _ := strconv.Atoi(job.Annotations["helm.sh/hook-weight"])
		for _, o := range h.rbac {
			weight, err := strconv.Atoi(o.GetAnnotations()["helm.sh/hook-weight"])
			hooks := strings.Split(o.GetAnnotations()["helm.sh/hook"], ",")
			missing := slices.ContainsFunc(strings.Split(hook, ","), func(h string) bool { return !slices.Contains(hooks, h) })
			if err != nil || weight >= jobWeight || missing {
				t.Errorf("%s %s does not come before Job %s (annotations %v)", o.GetKind(), o.GetName(), job.Name, o.GetAnnotations())
			}
		}
		for _, o := range append([]metav1.Object{job}, metaOf(h.rbac)...) {
			if got := o.GetAnnotations()["helm.sh/hook-delete-policy"]; got != "before-hook-creation,hook-succeeded" {
				t.Errorf("%s: hook-delete-policy %q", o.GetName(), got)
			}
		}
	}
}

// metaOf returns the objects' metadata.
func metaOf(objs []*unstructured.Unstructured) []metav1.Object {
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o)
	}
	return out
}

// command is the hook Job's command for action (apply or delete) without
// the binary; without the chart's hooks (h nil), the kustomization's
// README's.
func (h *onDemandShareHooks) command(action string) []string {
	if h == nil {
		return []string{"render", "--config=<the scheduler config>", "--" + action}
	}
	return h.jobs[action].Spec.Template.Spec.Containers[0].Command[1:]
}

// runRender runs args (a render command) with the config at configPath and
// the token of kubeconfig, and fails the test unless it succeeds without
// being refused anything.
func (tc *testContext) runRender(args []string, configPath, kubeconfig string) {
	t := tc.t
	t.Helper()
	var run []string
	for _, a := range args {
		if strings.HasPrefix(a, "--config=") {
			a = "--config=" + configPath
		}
		run = append(run, a)
	}
	run = append(run, "--kubeconfig="+kubeconfig)
	out, err := exec.CommandContext(tc.ctx, onDemandShareBinary(t), run...).CombinedOutput()
	if err != nil || forbidden.MatchString(string(out)) {
		t.Fatalf("ondemandshare-controller %v: %v\n%s", args, err, out)
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
