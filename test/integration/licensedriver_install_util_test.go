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
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// driverPod is the pod template of one of the driver's workloads.
type driverPod struct {
	kind, name, namespace string
	serviceAccount        string
	container             v1.Container
	volumes               []v1.Volume
	// template is the whole pod template.
	template v1.PodTemplateSpec
	// config is the configuration its --config names.
	config *driverConfig
}

// driverConfig is a ConfigMap key that holds a LicenseDriverConfiguration.
type driverConfig struct {
	configMap, key, data string
}

// driverInstall is the license driver's objects, rendered from a
// kustomization or the chart.
type driverInstall struct {
	source string
	objs   []*unstructured.Unstructured
	// namespace holds the ConfigMaps, the workloads and their
	// ServiceAccounts.
	namespace          string
	controller, plugin driverPod
}

// readDriverObjects finds the driver's controller Deployment and its
// kubelet-plugin DaemonSet in objs, which may hold other objects (the
// chart's scheduler), and the ConfigMap key each one's --config names.
func readDriverObjects(t testing.TB, source string, objs []*unstructured.Unstructured) *driverInstall {
	t.Helper()
	in := &driverInstall{source: source, objs: objs}
	configs := map[string]*driverConfig{} // by "<ConfigMap>/<key>"
	podOf := func(kind string, meta metav1.ObjectMeta, template v1.PodTemplateSpec, containerName string) driverPod {
		spec := template.Spec
		p := driverPod{kind: kind, name: meta.Name, namespace: meta.Namespace, serviceAccount: spec.ServiceAccountName, volumes: spec.Volumes, template: template}
		var found bool
		for _, c := range spec.Containers {
			if c.Name == containerName {
				p.container, found = c, true
			}
		}
		if !found {
			t.Fatalf("%s: %s %s has no container %q", source, kind, meta.Name, containerName)
		}
		if p.serviceAccount == "" {
			t.Fatalf("%s: %s %s names no ServiceAccount", source, kind, meta.Name)
		}
		return p
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			var cm v1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
				t.Fatal(err)
			}
			for key, data := range cm.Data {
				if strings.Contains(data, "kind: "+config.Kind) {
					configs[cm.Name+"/"+key] = &driverConfig{configMap: cm.Name, key: key, data: data}
				}
			}
		case "Deployment", "DaemonSet":
			var meta metav1.ObjectMeta
			var template v1.PodTemplateSpec
			if o.GetKind() == "Deployment" {
				var d appsv1.Deployment
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
					t.Fatal(err)
				}
				meta, template = d.ObjectMeta, d.Spec.Template
			} else {
				var d appsv1.DaemonSet
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
					t.Fatal(err)
				}
				meta, template = d.ObjectMeta, d.Spec.Template
			}
			for _, c := range template.Spec.Containers {
				switch {
				case o.GetKind() == "Deployment" && slices.Contains(c.Command, "controller"):
					in.controller = podOf("Deployment", meta, template, c.Name)
				case o.GetKind() == "DaemonSet" && slices.Contains(c.Command, "kubelet-plugin"):
					in.plugin = podOf("DaemonSet", meta, template, c.Name)
				}
			}
		}
	}
	if in.controller.name == "" {
		t.Fatalf("%s has no Deployment running `license-driver controller`", source)
	}
	if in.plugin.name == "" {
		t.Fatalf("%s has no DaemonSet running `license-driver kubelet-plugin`", source)
	}
	in.namespace = in.controller.namespace
	for _, p := range []*driverPod{&in.controller, &in.plugin} {
		if p.namespace != in.namespace {
			t.Errorf("%s: %s %s is in %q, the controller in %q", source, p.kind, p.name, p.namespace, in.namespace)
		}
		p.config = configOf(t, source, *p, configs)
	}
	return in
}

// configOf returns the ConfigMap key that p's --config names, through the
// volume mounted at its directory.
func configOf(t testing.TB, source string, p driverPod, configs map[string]*driverConfig) *driverConfig {
	t.Helper()
	var path string
	for _, a := range append(append([]string{}, p.container.Command...), p.container.Args...) {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			path = v
		}
	}
	dir, key := filepath.Split(path)
	for _, m := range p.container.VolumeMounts {
		if m.MountPath != strings.TrimSuffix(dir, "/") {
			continue
		}
		for _, v := range p.volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				if c := configs[v.ConfigMap.Name+"/"+key]; c != nil {
					return c
				}
			}
		}
	}
	t.Fatalf("%s: %s %s: --config=%s is no key of a mounted ConfigMap holding a %s", source, p.kind, p.name, path, config.Kind)
	return nil
}

// loadDriverConfig writes c's config to a file, as its volume would, and
// loads it with load, as the binary does: config.Load for the controller,
// config.LoadNode for the kubelet plugin.
func (tc *testContext) loadDriverConfig(in *driverInstall, c *driverConfig, load func(string) (*config.Configuration, error)) (string, *config.Configuration) {
	tc.t.Helper()
	path := tc.writeFile("license-driver-"+c.configMap+"-"+c.key, c.data)
	cfg, err := load(path)
	if err != nil {
		tc.t.Fatalf("%s: the ConfigMap %s's %s: %v", in.source, c.configMap, c.key, err)
	}
	return path, cfg
}

// driverArgs returns the arguments of p's container after the binary (its
// command, then its args), with --config pointing at configPath and each
// flag of set replaced by its value (or added, if the container does not
// pass it). It checks that --config is the ConfigMap's key where its volume
// is mounted, and that every flag of hostPaths is where the container
// mounts a hostPath volume of that same path (the kubelet and the runtime
// resolve the sockets' and CDI specs' paths on the host).
func (tc *testContext) driverArgs(in *driverInstall, p driverPod, configPath string, set map[string]string, hostPaths ...string) []string {
	tc.t.Helper()
	c := p.container
	if len(c.Command) == 0 {
		tc.t.Fatalf("%s: %s %s: the container has no command", in.source, p.kind, p.name)
	}
	volumes := map[string]v1.Volume{}
	for _, v := range p.volumes {
		volumes[v.Name] = v
	}
	mountOf := func(path string) (v1.VolumeMount, v1.Volume, bool) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == path || strings.HasPrefix(path, m.MountPath+"/") {
				return m, volumes[m.Name], true
			}
		}
		return v1.VolumeMount{}, v1.Volume{}, false
	}
	args := append(append([]string{}, c.Command[1:]...), c.Args...)
	seen := map[string]bool{}
	for i, a := range args {
		flag, value, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(flag, "--") {
			continue
		}
		seen[flag] = true
		switch {
		case flag == "--config":
			m, v, ok := mountOf(value)
			if !ok || v.ConfigMap == nil || v.ConfigMap.Name != p.config.configMap || value != m.MountPath+"/"+p.config.key {
				tc.t.Errorf("%s: %s %s: --config=%s is not the key %s of the ConfigMap %s where the container mounts it", in.source, p.kind, p.name, value, p.config.key, p.config.configMap)
			}
			args[i] = "--config=" + configPath
		case slices.Contains(hostPaths, flag):
			m, v, ok := mountOf(value)
			if !ok || v.HostPath == nil || m.MountPath != value || v.HostPath.Path != value || m.ReadOnly {
				tc.t.Errorf("%s: %s %s: %s=%s is not a writable hostPath volume of the same path mounted at that path (mounts %v)", in.source, p.kind, p.name, flag, value, c.VolumeMounts)
			}
		}
		if v, ok := set[flag]; ok {
			args[i] = flag + "=" + v
		}
	}
	if !seen["--config"] {
		tc.t.Fatalf("%s: %s %s passes no --config=", in.source, p.kind, p.name)
	}
	for _, flag := range hostPaths {
		if !seen[flag] {
			tc.t.Errorf("%s: %s %s does not pass %s: the default would do, but the test checks the mount against the flag", in.source, p.kind, p.name, flag)
		}
	}
	var added []string
	for flag, v := range set {
		if !seen[flag] {
			added = append(added, flag+"="+v)
		}
	}
	sort.Strings(added)
	return append(args, added...)
}

// driverEnv resolves the container's environment: fieldRefs from fields
// (fieldPath -> value), literal values as they are. Anything else fails
// the test: it would not be set here as it is in a pod.
func (tc *testContext) driverEnv(in *driverInstall, p driverPod, fields map[string]string) []string {
	tc.t.Helper()
	var env []string
	for _, e := range p.container.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil:
			v, ok := fields[e.ValueFrom.FieldRef.FieldPath]
			if !ok {
				tc.t.Fatalf("%s: %s %s: env %s from field %s: adapt the test", in.source, p.kind, p.name, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			env = append(env, e.Name+"="+v)
		default:
			tc.t.Fatalf("%s: %s %s: env %s from %v: adapt the test", in.source, p.kind, p.name, e.Name, e.ValueFrom)
		}
	}
	return env
}

// runDriver starts the driver binary with env added to this process's
// environment (without KUBECONFIG, so only --kubeconfig counts); it is
// stopped with SIGTERM when the test ends, and its output is logged if the
// test failed.
func (tc *testContext) runDriver(name string, env []string, args ...string) *framework.Process {
	tc.t.Helper()
	cmd := exec.Command(tc.licenseDriverBinary(), args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "POD_NAMESPACE=") && !strings.HasPrefix(e, "NODE_NAME=") && !strings.HasPrefix(e, "POD_UID=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return tc.start(name, cmd)
}

// checkHealthz calls GET /healthz on the controller's secure port without
// credentials, as the Deployment's probes do, and expects 200.
func checkHealthz(t testing.TB, ctx context.Context, proc *framework.Process, port int) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		if proc.Exited() {
			return false, fmt.Errorf("%s exited", proc.Name)
		}
		code, _, err := httpsGet(ctx, port, "/healthz", "")
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprint(code)
		return code == http.StatusOK, nil
	})
	if err != nil {
		t.Errorf("GET /healthz of %s: %v (last: %s)", proc.Name, err, last)
	}
}

// httpsGet GETs path on the secure port of 127.0.0.1 with a bearer token
// (none if empty), as Prometheus does, not verifying the self-signed
// certificate; it returns the status code and the body.
func httpsGet(ctx context.Context, port int, path, token string) (int, string, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the driver's self-signed serving cert
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// scope is where a permission holds: "cluster", or a namespace.
type scopedPermission struct {
	scope string
	permission
}

func (p scopedPermission) String() string { return p.scope + ": " + p.permission.String() }

// grantsOf returns every permission the ServiceAccount namespace/sa gets
// from the bindings and roles in objs, sorted, with the namespace names of
// rename replaced ("adminsched-license-driver" -> "<namespace>"), so that a
// kustomization and a chart compare. A binding to a role that objs do not
// hold fails the test: this driver uses no built-in role.
func grantsOf(t testing.TB, objs []*unstructured.Unstructured, namespace, sa string, rename map[string]string) []scopedPermission {
	t.Helper()
	clusterRoles, roles := map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			clusterRoles[r.Name] = r.Rules
		case "Role":
			var r rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			roles[r.Namespace+"/"+r.Name] = r.Rules
		}
	}
	scopeName := func(ns string) string {
		if n, ok := rename[ns]; ok {
			return n
		}
		return ns
	}
	var out []scopedPermission
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
			t.Fatal(err)
		}
		var ours bool
		for _, s := range b.Subjects {
			ours = ours || (s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == namespace)
		}
		if !ours {
			continue
		}
		scope := "cluster"
		if o.GetKind() == "RoleBinding" {
			scope = scopeName(b.Namespace)
		}
		var rules []rbacv1.PolicyRule
		var ok bool
		if b.RoleRef.Kind == "ClusterRole" {
			rules, ok = clusterRoles[b.RoleRef.Name]
			if !ok && slices.Contains(builtinDriverRoles, b.RoleRef.Name) {
				rules, ok = builtinClusterRole(t, b.RoleRef.Name), true
			}
		} else {
			rules, ok = roles[b.Namespace+"/"+b.RoleRef.Name]
		}
		if !ok {
			t.Fatalf("%s %s binds %s/%s to %s %s, which is not among the objects nor a built-in role the driver uses", o.GetKind(), b.Name, namespace, sa, b.RoleRef.Kind, b.RoleRef.Name)
		}
		for _, p := range permissions(t, rules) {
			out = append(out, scopedPermission{scope: scope, permission: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// builtinDriverRoles are the built-in ClusterRoles the driver binds:
// system:auth-delegator, for the controller's secure port (TokenReview and
// SubjectAccessReview).
var builtinDriverRoles = []string{"system:auth-delegator"}

// builtinClusterRole returns the rules of a built-in ClusterRole as the API
// server serves them.
func builtinClusterRole(t testing.TB, name string) []rbacv1.PolicyRule {
	t.Helper()
	r, err := adminClient.RbacV1().ClusterRoles().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the built-in ClusterRole %s: %v", name, err)
	}
	return r.Rules
}

// freeSeat is a seat of a pool that a new claim can be allocated.
type freeSeat struct {
	pool, device string
	// capacity, for a shared device (allowMultipleAllocations), is the
	// capacity each claim consumes one of; empty for a device per seat.
	capacity resourceapi.QualifiedName
}

// findFreeSeat returns an untainted device of pool's newest generation, in
// either of the driver's ways to publish seats, when publishedSeats counts
// a free seat.
func findFreeSeat(ctx context.Context, pool string) (freeSeat, error) {
	free, _, err := publishedSeats(ctx, pool)
	if err != nil {
		return freeSeat{}, err
	}
	if free == 0 {
		return freeSeat{}, fmt.Errorf("pool %s has no free seat", pool)
	}
	list, err := adminClient.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.driver=" + licensedriver.DriverName})
	if err != nil {
		return freeSeat{}, err
	}
	gen := int64(-1)
	for _, s := range list.Items {
		if s.Spec.Pool.Name == pool {
			gen = max(gen, s.Spec.Pool.Generation)
		}
	}
	for _, s := range list.Items {
		if s.Spec.Pool.Name != pool || s.Spec.Pool.Generation != gen {
			continue
		}
		for _, d := range s.Spec.Devices {
			if len(d.Taints) > 0 {
				continue
			}
			out := freeSeat{pool: pool, device: d.Name}
			if ptr.Deref(d.AllowMultipleAllocations, false) {
				out.capacity = seats.SeatsCapacity
			}
			return out, nil
		}
	}
	return freeSeat{}, fmt.Errorf("pool %s: no untainted device", pool)
}

// podSecurityNamespace creates a namespace for the test that enforces the
// Pod Security level.
func (tc *testContext) podSecurityNamespace(level string) string {
	tc.t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: tc.ns[:min(len(tc.ns), 40)] + "-" + level + "-",
		Labels:       map[string]string{"pod-security.kubernetes.io/enforce": level},
	}}
	created, err := adminClient.CoreV1().Namespaces().Create(tc.ctx, ns, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating a namespace that enforces %s: %v", level, err)
	}
	tc.mu.Lock()
	tc.namespaces = append(tc.namespaces, created.Name)
	tc.mu.Unlock()
	return created.Name
}

// dryRunPod creates, server-side dry-run, a pod of p's template in
// namespace: it goes through admission (Pod Security) and is not stored.
func (tc *testContext) dryRunPod(p driverPod, namespace string) error {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: p.name + "-", Namespace: namespace, Labels: p.template.Labels},
		Spec:       *p.template.Spec.DeepCopy(),
	}
	_, err := adminClient.CoreV1().Pods(namespace).Create(tc.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}
