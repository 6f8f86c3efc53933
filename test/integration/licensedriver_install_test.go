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
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/node"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const licenseDriverDir = "../../manifests/license-driver"

// The permissions each role of the driver needs, and nothing more ("<namespace>"
// is the driver's namespace). Each comes from the code that calls it (see
// manifests/license-driver/clusterroles.yaml and roles.yaml).
var (
	controllerNeeds = []scopedPermission{
		{"cluster", permission{"resource.k8s.io", "resourceslices", "list", ""}},
		{"cluster", permission{"resource.k8s.io", "resourceslices", "watch", ""}},
		{"cluster", permission{"resource.k8s.io", "resourceslices", "create", ""}},
		{"cluster", permission{"resource.k8s.io", "resourceslices", "update", ""}},
		{"cluster", permission{"resource.k8s.io", "resourceslices", "delete", ""}},
		{"cluster", permission{"resource.k8s.io", "deviceclasses", "get", ""}},
		{"cluster", permission{"resource.k8s.io", "deviceclasses", "list", ""}},
		{"cluster", permission{"resource.k8s.io", "deviceclasses", "create", ""}},
		{"cluster", permission{"resource.k8s.io", "deviceclasses", "update", ""}},
		{"cluster", permission{"resource.k8s.io", "deviceclasses", "delete", ""}},
		{"cluster", permission{"resource.k8s.io", "resourceclaims", "list", ""}},
		{"cluster", permission{"resource.k8s.io", "resourceclaims", "watch", ""}},
		{"<namespace>", permission{"coordination.k8s.io", "leases", "get", "license-driver"}},
		{"<namespace>", permission{"coordination.k8s.io", "leases", "update", "license-driver"}},
		{"<namespace>", permission{"coordination.k8s.io", "leases", "create", ""}},
		{"<namespace>", permission{"", "events", "create", ""}},
		{"<namespace>", permission{"", "events", "patch", ""}},
		{"default", permission{"", "events", "create", ""}},
		{"default", permission{"", "events", "patch", ""}},
		// The secure port's delegated authentication and authorization
		// (system:auth-delegator).
		{"cluster", permission{"authentication.k8s.io", "tokenreviews", "create", ""}},
		{"cluster", permission{"authorization.k8s.io", "subjectaccessreviews", "create", ""}},
	}
	pluginNeeds = []scopedPermission{
		{"cluster", permission{"resource.k8s.io", "resourceclaims", "get", ""}},
	}
)

// TestLicenseDriverInstall applies manifests/license-driver to the API server
// and runs the binary as its Deployment and DaemonSet do, with their
// ServiceAccounts' own tokens and their ConfigMaps' configs:
//   - two controller replicas: one takes the Lease, publishes the 10 MATLAB
//     seats (ResourceSlices of pool matlab) and the DeviceClass; both answer
//     /healthz on their secure port without credentials; /metrics there is
//     refused without a token and to a ServiceAccount RBAC does not let
//     scrape, and served to one bound to the install's metrics reader role;
//     a claim allocated one seat leaves 9 free;
//   - the kubelet plugin, from a configuration of its own that holds the
//     controller's features and no license source, registers and prepares
//     that claim as a CDI device that sets LM_LICENSE_FILE, reading the
//     claim with its token; its gRPC health service says ready once the
//     kubelet has registered it, as the DaemonSet's probes ask;
//   - neither is refused anything ("forbidden" in its log);
//   - the roles grant exactly what each needs, and the API server's
//     authorizer refuses each ServiceAccount what it does not need;
//   - the ValidatingAdmissionPolicy keeps the controller to its own
//     ResourceSlices and DeviceClasses, which RBAC cannot: DeviceClasses
//     named <pool>.licenses.adminsched.io, selecting the driver's devices
//     only, without opaque config.
//
// Once with the ConfigMap as shipped (a device per seat), once with
// `devices: Shared` added (one shared device): the same RBAC serves both.
func TestLicenseDriverInstall(t *testing.T) {
	for _, tt := range []struct{ name, extra string }{
		{"as shipped", ""},
		{"devices Shared", "devices: Shared\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			in := readDriverObjects(t, "manifests/license-driver", kustomize(t, licenseDriverDir))
			in.controller.config.data += tt.extra
			tc.checkDriverInstall(in)
		})
	}
}

// checkDriverInstall applies in's objects and runs the driver as they do
// (see TestLicenseDriverInstall).
func (tc *testContext) checkDriverInstall(in *driverInstall) {
	t := tc.t
	t.Helper()
	tc.apply(in.objs)
	configPath, cfg := tc.loadDriverConfig(in, in.controller.config, config.Load)
	pluginConfigPath, pluginConfig := tc.loadDriverConfig(in, in.plugin.config, config.LoadNode)
	checkPluginConfig(t, in, cfg, pluginConfig)
	var matlab *config.Feature
	for i := range cfg.Features {
		if cfg.Features[i].Name == "MATLAB" {
			matlab = &cfg.Features[i]
		}
	}
	if matlab == nil || ptr.Deref(matlab.Seats, 0) != 10 || cfg.Source.Static == nil {
		t.Fatalf("the example config should serve 10 MATLAB seats from the static source: %s", in.controller.config.data)
	}
	// After the binaries have stopped (cleanups run last-in first-out).
	t.Cleanup(func() { deletePools(tc, cfg.Features) })
	// Before the controllers start: the policy in force must let them do
	// their work.
	tc.checkAdmissionPolicy(in)

	// The controller, two replicas as the Deployment runs them.
	controllerConfig := tc.serviceAccountKubeconfig(in.namespace, in.controller.serviceAccount)
	env := tc.driverEnv(in, in.controller, map[string]string{"metadata.namespace": in.namespace})
	var controllers []*framework.Process
	var ports []int
	for i := range 2 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		args := tc.driverArgs(in, in.controller, configPath, map[string]string{
			"--kubeconfig":   controllerConfig,
			"--secure-port":  fmt.Sprint(port),
			"--bind-address": "127.0.0.1",
		})
		controllers = append(controllers, tc.runDriver(fmt.Sprintf("license-driver-controller-%d", i), env, args...))
		ports = append(ports, port)
	}
	for i, p := range controllers {
		checkHealthz(t, tc.ctx, p, ports[i])
	}
	tc.waitFreeSeats(matlab.Pool, 10)
	class, err := adminClient.ResourceV1().DeviceClasses().Get(tc.ctx, matlab.DeviceClassName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the DeviceClass of MATLAB: %v", err)
	}
	if got, want := ptr.Deref(class.Spec.ExtendedResourceName, ""), licensedriver.DriverName+"/matlab"; got != want {
		t.Errorf("DeviceClass %s maps extended resource %q, want %q", class.Name, got, want)
	}
	lease, err := adminClient.CoordinationV1().Leases(in.namespace).Get(tc.ctx, "license-driver", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the controller's Lease %s/license-driver: %v", in.namespace, err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
		t.Errorf("the Lease %s/license-driver has no holder", in.namespace)
	}
	tc.checkDriverMetrics(in, ports)

	// A claim that holds one seat, allocated as the scheduler would.
	seat, err := findFreeSeat(tc.ctx, matlab.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if shared := seat.capacity != ""; shared != (cfg.Devices == config.Shared) {
		t.Errorf("pool %s is published as a shared device: %v; the config's devices: %s", seat.pool, shared, cfg.Devices)
	}
	t.Logf("pool %s: allocating a seat of device %s (shared: %v)", seat.pool, seat.device, seat.capacity != "")
	claim := tc.allocateSeat("matlab-seat", matlab.DeviceClassName, seat)
	tc.waitFreeSeats(matlab.Pool, 9)

	// The kubelet plugin, as the DaemonSet runs it, with its own token.
	tc.checkKubeletPlugin(in, pluginConfigPath, claim, matlab.Env)
	if err := adminClient.ResourceV1().ResourceClaims(tc.ns).Delete(tc.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tc.waitFreeSeats(matlab.Pool, 10)

	// Failover: the leader stops (SIGTERM releases the Lease), the standby
	// takes the Lease with its token and publishes.
	leader, standby := controllers[0], controllers[1]
	if !strings.Contains(leader.Output(), "Successfully acquired lease") {
		leader, standby = standby, leader
	}
	leader.Stop()
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		return strings.Contains(standby.Output(), "Successfully acquired lease"), nil
	})
	if err != nil {
		t.Fatalf("the standby %s did not take the Lease after the leader %s stopped: %v", standby.Name, leader.Name, err)
	}
	seat, err = findFreeSeat(tc.ctx, matlab.Pool)
	if err != nil {
		t.Fatal(err)
	}
	claim = tc.allocateSeat("matlab-seat-2", matlab.DeviceClassName, seat)
	tc.waitFreeSeats(matlab.Pool, 9)
	if err := adminClient.ResourceV1().ResourceClaims(tc.ns).Delete(tc.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, p := range controllers {
		if p.Exited() && p != leader {
			t.Errorf("%s exited", p.Name)
		}
		if lines := forbidden.FindAllString(p.Output(), -1); len(lines) > 0 {
			t.Errorf("%s running as its ServiceAccount was refused %d times (first: %q): the RBAC misses something", p.Name, len(lines), lines[0])
		}
	}

	// The roles grant exactly what each needs.
	rename := map[string]string{in.namespace: "<namespace>"}
	for _, role := range []struct {
		pod   driverPod
		needs []scopedPermission
	}{{in.controller, controllerNeeds}, {in.plugin, pluginNeeds}} {
		got := grantsOf(t, in.objs, in.namespace, role.pod.serviceAccount, rename)
		if diff := cmp.Diff(sortedGrants(role.needs), got, cmp.AllowUnexported(scopedPermission{}, permission{})); diff != "" {
			t.Errorf("what %s %s's ServiceAccount is granted (-needs +granted):\n%s", role.pod.kind, role.pod.name, diff)
		}
	}
	tc.checkDriverAuthorization(in)
	tc.checkPodSecurity(in)
}

// checkPodSecurity holds the pods of the workloads to the Pod Security
// levels the install promises, with the API server's PodSecurity admission
// (server-side dry-run creates): the controller's meets "restricted"; the
// kubelet plugin's is refused by "baseline" for its hostPath volumes and
// nothing else, and admitted in the install's namespace. It also checks
// the probes: the controller's GET /healthz over HTTPS on the port of its
// --secure-port, and serves no plain HTTP; the kubelet plugin's ask the
// gRPC health service of its --health-address for liveness and readiness.
func (tc *testContext) checkPodSecurity(in *driverInstall) {
	t := tc.t
	t.Helper()
	if err := tc.dryRunPod(in.controller, tc.podSecurityNamespace("restricted")); err != nil {
		t.Errorf("%s: the controller's pod does not meet Pod Security restricted: %v", in.source, err)
	}
	err := tc.dryRunPod(in.plugin, tc.podSecurityNamespace("baseline"))
	_, violations, _ := strings.Cut(fmt.Sprint(err), `violates PodSecurity "baseline:latest": `)
	if err == nil || !strings.HasPrefix(violations, "hostPath volumes (") || strings.Count(violations, "), ") > 0 {
		t.Errorf("%s: the kubelet plugin's pod under Pod Security baseline: %v, want it refused for its hostPath volumes only", in.source, err)
	} else {
		t.Logf("%s: under baseline the kubelet plugin is refused for %s", in.source, violations)
	}
	if err := tc.dryRunPod(in.plugin, in.namespace); err != nil {
		t.Errorf("%s: the kubelet plugin's pod is refused in its own namespace %s: %v", in.source, in.namespace, err)
	}

	c := in.controller.container
	flags := containerFlags(c)
	if address, ok := flags["--http-address"]; !ok || address != "" {
		t.Errorf("%s: the controller passes --http-address=%q (set: %v), want it empty: no plain HTTP server", in.source, address, ok)
	}
	for name, probe := range map[string]*v1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != "/healthz" || probe.HTTPGet.Scheme != v1.URISchemeHTTPS {
			t.Errorf("%s: the controller's %s probe is not GET /healthz over HTTPS: %+v", in.source, name, probe)
			continue
		}
		if got := containerPort(c, probe.HTTPGet.Port.String()); got != flags["--secure-port"] {
			t.Errorf("%s: the controller's %s probe is on port %s, its --secure-port=%s", in.source, name, got, flags["--secure-port"])
		}
	}
	p := in.plugin.container
	_, healthPort, _ := strings.Cut(containerFlags(p)["--health-address"], ":")
	for service, probe := range map[string]*v1.Probe{node.HealthLiveness: p.LivenessProbe, node.HealthReadiness: p.ReadinessProbe} {
		if probe == nil || probe.GRPC == nil || ptr.Deref(probe.GRPC.Service, "") != service || fmt.Sprint(probe.GRPC.Port) != healthPort {
			t.Errorf("%s: the kubelet plugin's %s probe is not a grpc probe of service %q on the port of --health-address (%s): %+v", in.source, service, service, healthPort, probe)
		}
	}
}

// containerFlags returns the --flag=value arguments of c.
func containerFlags(c v1.Container) map[string]string {
	out := map[string]string{}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if flag, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "--") {
			out[flag] = value
		}
	}
	return out
}

// containerPort resolves a probe's port (a number or a port's name) to a
// number.
func containerPort(c v1.Container, port string) string {
	for _, p := range c.Ports {
		if p.Name == port {
			return fmt.Sprint(p.ContainerPort)
		}
	}
	return port
}

// checkPluginConfig holds the kubelet plugin's configuration to what it
// needs: a ConfigMap of its own (the DaemonSet mounts no other) that holds
// only apiVersion, kind and features (no source, not even a static
// placeholder; no seats), and the controller's features with the same
// pools and environment.
func checkPluginConfig(t testing.TB, in *driverInstall, ctrl, plugin *config.Configuration) {
	t.Helper()
	if in.plugin.config.configMap == in.controller.config.configMap {
		t.Errorf("%s: the kubelet plugin reads the controller's ConfigMap %s", in.source, in.controller.config.configMap)
	}
	for _, v := range in.plugin.volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == in.controller.config.configMap {
			t.Errorf("%s: the kubelet plugin mounts the controller's ConfigMap %s (volume %s)", in.source, v.ConfigMap.Name, v.Name)
		}
	}
	if plugin.Source != (config.Source{}) {
		t.Errorf("%s: the kubelet plugin's configuration holds a source: %+v", in.source, plugin.Source)
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(in.plugin.config.data), &raw); err != nil {
		t.Fatalf("%s: the kubelet plugin's configuration: %v", in.source, err)
	}
	if diff := cmp.Diff([]string{"apiVersion", "features", "kind"}, slices.Sorted(maps.Keys(raw))); diff != "" {
		t.Errorf("%s: the kubelet plugin's configuration's fields (-want +got):\n%s", in.source, diff)
	}
	for i, f := range plugin.Features {
		if f.Seats != nil {
			t.Errorf("%s: the kubelet plugin's configuration sets features[%d].seats, which it does not read", in.source, i)
		}
	}
	type feature struct {
		name string
		env  map[string]string
	}
	features := func(c *config.Configuration) map[string]feature {
		out := map[string]feature{}
		for _, f := range c.Features {
			out[f.Pool] = feature{f.Name, f.Env}
		}
		return out
	}
	if diff := cmp.Diff(features(ctrl), features(plugin), cmp.AllowUnexported(feature{})); diff != "" {
		t.Errorf("%s: the kubelet plugin's features differ from the controller's (-controller +kubelet plugin):\n%s", in.source, diff)
	}
}

// checkDriverMetrics scrapes /metrics on the controllers' secure ports
// (ports) as Prometheus would: without a token, refused (403, anonymous);
// with the token of a ServiceAccount no role lets GET /metrics, refused;
// with the token of one the install's metrics reader role is bound to (the
// chart's own binding, or one made here to the kustomization's
// ClusterRole, as a user would), the metrics, the leader's with the seats.
func (tc *testContext) checkDriverMetrics(in *driverInstall, ports []int) {
	t := tc.t
	t.Helper()
	for _, name := range []string{"prometheus", "someone-else"} {
		_, err := adminClient.CoreV1().ServiceAccounts(tc.ns).Create(tc.ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if !boundInObjects(in.objs, tc.ns, "prometheus") {
		role := metricsReaderRole(t, in.objs)
		if role == "" {
			t.Fatalf("%s has no ClusterRole that grants GET /metrics and nothing else", in.source)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "license-driver-metrics-" + tc.ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: tc.ns}},
		}
		if _, err := adminClient.RbacV1().ClusterRoleBindings().Create(tc.ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = adminClient.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		})
	}
	token := func(sa string) string {
		tr, err := adminClient.CoreV1().ServiceAccounts(tc.ns).CreateToken(tc.ctx, sa, tokenRequest(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	reader, other := token("prometheus"), token("someone-else")
	var seats bool
	for _, port := range ports {
		for _, tt := range []struct {
			who, token string
			want       string
		}{{"no token", "", `User \"system:anonymous\" cannot get path \"/metrics\"`}, {"someone-else", other, `cannot get path \"/metrics\"`}} {
			code, body, err := httpsGet(tc.ctx, port, "/metrics", tt.token)
			if err != nil || code != http.StatusForbidden || !strings.Contains(body, tt.want) {
				t.Errorf("GET /metrics on port %d with %s: %d %.200q %v, want 403 and %q", port, tt.who, code, body, err, tt.want)
			}
		}
		// RBAC and the driver's authorization cache may lag the binding.
		var last string
		err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
			code, body, err := httpsGet(ctx, port, "/metrics", reader)
			last = fmt.Sprintf("%d %.200q %v", code, body, err)
			seats = seats || strings.Contains(body, `license_driver_seats{pool="matlab"`)
			return code == http.StatusOK, nil
		})
		if err != nil {
			t.Errorf("GET /metrics on port %d as %s/prometheus: %s, want 200", port, tc.ns, last)
		}
	}
	if !seats {
		t.Errorf("no controller's /metrics holds license_driver_seats of pool matlab")
	}
}

// boundInObjects says whether a ClusterRoleBinding of objs names the
// ServiceAccount namespace/name.
func boundInObjects(objs []*unstructured.Unstructured, namespace, name string) bool {
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m, _ := s.(map[string]any)
			if m["kind"] == "ServiceAccount" && m["name"] == name && m["namespace"] == namespace {
				return true
			}
		}
	}
	return false
}

// metricsReaderRole returns the ClusterRole of objs that grants exactly GET
// on the non-resource URL /metrics.
func metricsReaderRole(t testing.TB, objs []*unstructured.Unstructured) string {
	t.Helper()
	want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		var r rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
			t.Fatal(err)
		}
		if cmp.Equal(want, r.Rules) {
			return r.Name
		}
	}
	return ""
}

// checkAdmissionPolicy tries, with the controller ServiceAccount's token,
// what its RBAC allows but the install's ValidatingAdmissionPolicy must
// refuse: another driver's ResourceSlice, a DeviceClass without the
// driver's label, deleting a DeviceClass that is not the driver's, and
// labelled DeviceClasses the controller does not build: another name, a
// selector that does not start with the driver's test or escapes it (||,
// ?:), no selector, a second selector of its own, opaque config, created
// or added by an update. The policy takes effect once the API server has
// loaded it: each try is repeated until refused. Then the classes the
// controller builds (controller.DeviceClass) are created, updated and
// deleted with the same token.
func (tc *testContext) checkAdmissionPolicy(in *driverInstall) {
	t := tc.t
	t.Helper()
	sa := tc.serviceAccountClient(tc.serviceAccountKubeconfig(in.namespace, in.controller.serviceAccount))
	classes := sa.ResourceV1().DeviceClasses()
	foreignName := "foreign-" + tc.ns
	foreign, err := adminClient.ResourceV1().DeviceClasses().Create(tc.ctx, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: foreignName}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adminClient.ResourceV1().DeviceClasses().Delete(context.Background(), foreign.Name, metav1.DeleteOptions{})
	})
	id := string(uuid.NewUUID())[:8]
	// own is a class as the controller builds it, for a feature of its own.
	own := func(pool string) *resourceapi.DeviceClass {
		return controller.DeviceClass(config.Feature{Name: pool, Pool: pool,
			ResourceName: licensedriver.DriverName + "/" + pool, DeviceClassName: pool + "." + licensedriver.DriverName})
	}
	deleteClass := func(name string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			return adminClient.ResourceV1().DeviceClasses().Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
	// createClass tries to create own(pool) changed by change.
	createClass := func(pool string, change func(*resourceapi.DeviceClass)) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			c := own(pool)
			change(c)
			_, err := classes.Create(ctx, c, metav1.CreateOptions{})
			return err
		}
	}
	selector := func(expressions ...string) func(*resourceapi.DeviceClass) {
		return func(c *resourceapi.DeviceClass) {
			c.Spec.Selectors = nil
			for _, e := range expressions {
				c.Spec.Selectors = append(c.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: e}})
			}
		}
	}
	const driverTest = `device.driver == "licenses.adminsched.io"`
	opaque := func(c *resourceapi.DeviceClass) {
		c.Spec.Config = []resourceapi.DeviceClassConfiguration{{DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
			Driver: licensedriver.DriverName, Parameters: runtime.RawExtension{Raw: []byte(`{"debug":true}`)},
		}}}}
	}
	// An own class that exists, for the update that adds config.
	updated := "vap-upd-" + id
	if _, err := adminClient.ResourceV1().DeviceClasses().Create(tc.ctx, own(updated), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteClass(updated + "." + licensedriver.DriverName)(context.Background()) })
	const (
		labelRule    = "DeviceClasses labelled"
		nameRule     = "DeviceClasses named <pool>.licenses.adminsched.io"
		selectorRule = "whose every selector"
		configRule   = "DeviceClasses without spec.config"
	)
	for _, try := range []struct {
		name string
		want string // the policy's message
		do   func(ctx context.Context) error
		undo func(ctx context.Context) error
	}{
		{"create a ResourceSlice of driver gpu.example.com", "ResourceSlices of the driver licenses.adminsched.io", func(ctx context.Context) error {
			_, err := sa.ResourceV1().ResourceSlices().Create(ctx, &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: "gpu-" + tc.ns},
				Spec: resourceapi.ResourceSliceSpec{Driver: "gpu.example.com", AllNodes: ptr.To(true),
					Pool: resourceapi.ResourcePool{Name: "gpus", ResourceSliceCount: 1}},
			}, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			return adminClient.ResourceV1().ResourceSlices().Delete(ctx, "gpu-"+tc.ns, metav1.DeleteOptions{})
		}},
		{"create a DeviceClass without the driver's label", labelRule, func(ctx context.Context) error {
			_, err := classes.Create(ctx, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled-" + tc.ns}}, metav1.CreateOptions{})
			return err
		}, deleteClass("unlabelled-" + tc.ns)},
		{"delete a DeviceClass that is not the driver's", labelRule, func(ctx context.Context) error {
			return classes.Delete(ctx, foreignName, metav1.DeleteOptions{})
		}, func(ctx context.Context) error {
			_, err := adminClient.ResourceV1().DeviceClasses().Create(ctx, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: foreignName}}, metav1.CreateOptions{})
			return err
		}},
		{"create a labelled DeviceClass named otherwise", nameRule,
			createClass("vap-name-"+id, func(c *resourceapi.DeviceClass) { c.Name = "gpu-" + id + ".example.com" }),
			deleteClass("gpu-" + id + ".example.com")},
		{"create a labelled DeviceClass selecting another driver", selectorRule,
			createClass("vap-gpu-"+id, selector(`device.driver == "gpu.example.com"`)),
			deleteClass("vap-gpu-" + id + "." + licensedriver.DriverName)},
		{"create a labelled DeviceClass whose selector escapes the driver's test with ||", selectorRule,
			createClass("vap-or-"+id, selector(driverTest+" || true")),
			deleteClass("vap-or-" + id + "." + licensedriver.DriverName)},
		{"create a labelled DeviceClass whose selector escapes the driver's test with ?:", selectorRule,
			createClass("vap-cond-"+id, selector(driverTest+" && false ? false : true")),
			deleteClass("vap-cond-" + id + "." + licensedriver.DriverName)},
		{"create a labelled DeviceClass without a selector", selectorRule,
			createClass("vap-none-"+id, selector()),
			deleteClass("vap-none-" + id + "." + licensedriver.DriverName)},
		{"create a labelled DeviceClass with a second selector of its own", selectorRule,
			createClass("vap-two-"+id, selector(driverTest, "true")),
			deleteClass("vap-two-" + id + "." + licensedriver.DriverName)},
		{"create a labelled DeviceClass with opaque config", configRule,
			createClass("vap-config-"+id, opaque),
			deleteClass("vap-config-" + id + "." + licensedriver.DriverName)},
		{"add opaque config to a class of the driver's", configRule, func(ctx context.Context) error {
			c, err := classes.Get(ctx, updated+"."+licensedriver.DriverName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			opaque(c)
			_, err = classes.Update(ctx, c, metav1.UpdateOptions{})
			return err
		}, func(ctx context.Context) error {
			c, err := adminClient.ResourceV1().DeviceClasses().Get(ctx, updated+"."+licensedriver.DriverName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			c.Spec.Config = nil
			_, err = adminClient.ResourceV1().DeviceClasses().Update(ctx, c, metav1.UpdateOptions{})
			return err
		}},
	} {
		last := "not tried"
		err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			err := try.do(ctx)
			if err == nil {
				// Let through, maybe before the policy was loaded: undo, retry.
				last = "allowed"
				return false, try.undo(ctx)
			}
			last = err.Error()
			return apierrors.IsForbidden(err) && strings.Contains(last, "ValidatingAdmissionPolicy") && strings.Contains(last, try.want), nil
		})
		if err != nil {
			t.Errorf("the controller's ServiceAccount tried to %s: %s, want it refused by a ValidatingAdmissionPolicy saying %q (%v)", try.name, last, try.want, err)
		}
	}

	// What the controller does to its own classes, admitted.
	mine := own("vap-own-" + id)
	if _, err := classes.Create(tc.ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Errorf("the controller's ServiceAccount could not create a DeviceClass as the controller builds it (%s): %v", mine.Spec.Selectors[0].CEL.Expression, err)
	} else {
		c, err := classes.Get(tc.ctx, mine.Name, metav1.GetOptions{})
		if err == nil {
			c.Spec.ExtendedResourceName = ptr.To(licensedriver.DriverName + "/vap-renamed-" + id)
			_, err = classes.Update(tc.ctx, c, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("the controller's ServiceAccount could not update its DeviceClass %s: %v", mine.Name, err)
		}
		if err := classes.Delete(tc.ctx, mine.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("the controller's ServiceAccount could not delete its DeviceClass %s: %v", mine.Name, err)
		}
	}
}

func sortedGrants(p []scopedPermission) []scopedPermission {
	out := append([]scopedPermission{}, p...)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// allocateSeat creates a claim in the test's namespace for one seat of
// class and allocates it seat, as the scheduler does: a device of its own,
// or a share of a shared device's capacity.
func (tc *testContext) allocateSeat(name, class string, seat freeSeat) *resourceapi.ResourceClaim {
	tc.t.Helper()
	claims := adminClient.ResourceV1().ResourceClaims(tc.ns)
	claim, err := claims.Create(tc.ctx, &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "seat", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating claim %s: %v", name, err)
	}
	result := resourceapi.DeviceRequestAllocationResult{Request: "seat", Driver: licensedriver.DriverName, Pool: seat.pool, Device: seat.device}
	if seat.capacity != "" {
		result.ShareID = ptr.To(uuid.NewUUID())
		result.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{seat.capacity: resource.MustParse("1")}
	}
	claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
		Results: []resourceapi.DeviceRequestAllocationResult{result},
	}}
	claim, err = claims.UpdateStatus(tc.ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		tc.t.Fatalf("allocating claim %s: %v", name, err)
	}
	return claim
}

// checkKubeletPlugin runs the kubelet plugin with the DaemonSet's arguments
// on temporary directories, with its ServiceAccount's token, then, as the
// kubelet does: reads its registration socket, prepares claim on its DRA
// socket (a CDI device whose spec sets env), unprepares it, and stops it.
func (tc *testContext) checkKubeletPlugin(in *driverInstall, configPath string, claim *resourceapi.ResourceClaim, env map[string]string) {
	t := tc.t
	t.Helper()
	// Short paths: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "ldi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	pluginDir, registrar, cdi := filepath.Join(dir, "plugin"), filepath.Join(dir, "registry"), filepath.Join(dir, "cdi")
	// The kubelet creates its registration directory (the DaemonSet's
	// hostPath is type Directory).
	if err := os.Mkdir(registrar, 0o750); err != nil {
		t.Fatal(err)
	}
	hostPaths := []string{"--plugin-data-dir", "--registrar-dir", "--cdi-dir"}
	healthPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := tc.driverArgs(in, in.plugin, configPath, map[string]string{
		"--kubeconfig":      tc.serviceAccountKubeconfig(in.namespace, in.plugin.serviceAccount),
		"--plugin-data-dir": pluginDir,
		"--registrar-dir":   registrar,
		"--cdi-dir":         cdi,
		"--health-address":  fmt.Sprintf("127.0.0.1:%d", healthPort),
	}, hostPaths...)
	podUID := "0b6e1f52-license-driver-test"
	proc := tc.runDriver("license-driver-kubelet-plugin", tc.driverEnv(in, in.plugin, map[string]string{
		"spec.nodeName": "install-node", "metadata.uid": podUID,
	}), args...)

	var regSocket string
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		if proc.Exited() {
			return false, fmt.Errorf("%s exited", proc.Name)
		}
		matches, err := filepath.Glob(filepath.Join(registrar, "*-reg.sock"))
		if len(matches) > 0 {
			regSocket = matches[0]
		}
		return regSocket != "", err
	})
	if err != nil {
		t.Fatalf("waiting for the kubelet plugin's registration socket in %s: %v", registrar, err)
	}
	registration := registerapi.NewRegistrationClient(dialUnix(t, regSocket))
	info, err := registration.GetInfo(tc.ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatalf("GetInfo on %s: %v", regSocket, err)
	}
	if info.Name != licensedriver.DriverName || !strings.HasPrefix(info.Endpoint, pluginDir+"/") {
		t.Fatalf("GetInfo: driver %q at %q, want %q in %s", info.Name, info.Endpoint, licensedriver.DriverName, pluginDir)
	}
	// The DaemonSet's probes: live once the sockets answer, ready once the
	// kubelet has registered the plugin.
	health := healthpb.NewHealthClient(dialTCP(t, fmt.Sprintf("127.0.0.1:%d", healthPort)))
	waitHealth := func(service string, want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		var last string
		err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
			resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
			last = fmt.Sprintf("%v %v", resp.GetStatus(), err)
			return err == nil && resp.GetStatus() == want, nil
		})
		if err != nil {
			t.Errorf("the kubelet plugin's health of %q: %s, want %v", service, last, want)
		}
	}
	waitHealth(node.HealthLiveness, healthpb.HealthCheckResponse_SERVING)
	if resp, err := health.Check(tc.ctx, &healthpb.HealthCheckRequest{Service: node.HealthReadiness}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("the kubelet plugin's readiness before the kubelet registered it: %v %v, want NOT_SERVING", resp.GetStatus(), err)
	}
	if _, err := registration.NotifyRegistrationStatus(tc.ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatalf("NotifyRegistrationStatus: %v", err)
	}
	waitHealth(node.HealthReadiness, healthpb.HealthCheckResponse_SERVING)
	var draSocket string
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		_, err := os.Stat(info.Endpoint)
		draSocket = info.Endpoint
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the DRA socket %s: %v", info.Endpoint, err)
	}
	dra := drapb.NewDRAPluginClient(dialUnix(t, draSocket))
	pc := &drapb.Claim{Namespace: claim.Namespace, Name: claim.Name, Uid: string(claim.UID)}
	resp, err := dra.NodePrepareResources(tc.ctx, &drapb.NodePrepareResourcesRequest{Claims: []*drapb.Claim{pc}})
	if err != nil {
		t.Fatalf("NodePrepareResources: %v", err)
	}
	got := resp.Claims[string(claim.UID)]
	if got == nil || got.Error != "" || len(got.Devices) != 1 || !cmp.Equal(got.Devices[0].CdiDeviceIds, []string{node.CDIDeviceID(claim.UID)}) {
		t.Fatalf("NodePrepareResources of %s: %v, want the CDI device %s", claim.Name, got, node.CDIDeviceID(claim.UID))
	}
	spec := filepath.Join(cdi, node.SpecFileName(claim.UID))
	data, err := os.ReadFile(spec)
	if err != nil {
		t.Fatalf("the CDI spec of the prepared claim: %v", err)
	}
	for k, v := range env {
		if !strings.Contains(string(data), fmt.Sprintf("%q", k+"="+v)) {
			t.Errorf("the CDI spec %s does not set %s=%s:\n%s", spec, k, v, data)
		}
	}
	if _, err := dra.NodeUnprepareResources(tc.ctx, &drapb.NodeUnprepareResourcesRequest{Claims: []*drapb.Claim{pc}}); err != nil {
		t.Errorf("NodeUnprepareResources: %v", err)
	}
	if _, err := os.Stat(spec); !os.IsNotExist(err) {
		t.Errorf("after unprepare, the CDI spec %s: %v, want it removed", spec, err)
	}
	proc.Stop()
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the kubelet plugin running as its ServiceAccount was refused %d times (first: %q)", len(lines), lines[0])
	}
	if _, err := os.Stat(regSocket); !os.IsNotExist(err) {
		t.Errorf("after SIGTERM, the registration socket %s: %v, want it removed", regSocket, err)
	}
}

func dialTCP(t testing.TB, address string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", address, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func dialUnix(t testing.TB, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", socket, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// checkDriverAuthorization asks the API server's authorizer, with each
// ServiceAccount's own token, what it may do: what its role needs, yes;
// what a compromised driver pod could abuse, no.
func (tc *testContext) checkDriverAuthorization(in *driverInstall) {
	t := tc.t
	t.Helper()
	clientOf := func(p driverPod) kubernetes.Interface {
		return tc.serviceAccountClient(tc.serviceAccountKubeconfig(in.namespace, p.serviceAccount))
	}
	ns := func(s string) string {
		switch s {
		case "<namespace>":
			return in.namespace
		case "cluster":
			return ""
		}
		return s
	}
	refused := map[string][]scopedPermission{
		"controller": {
			{"cluster", permission{"", "nodes", "update", ""}},
			{"cluster", permission{"", "pods", "delete", ""}},
			{"cluster", permission{"", "pods", "create", ""}},
			{"cluster", permission{"", "secrets", "get", ""}},
			{"<namespace>", permission{"", "secrets", "list", ""}},
			{"<namespace>", permission{"", "configmaps", "update", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceslices", "patch", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceclaims", "create", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceclaims", "update", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceclaims/status", "update", ""}},
			{"cluster", permission{"resource.k8s.io", "devicetaintrules", "create", ""}},
			{"kube-system", permission{"coordination.k8s.io", "leases", "get", "kube-scheduler"}},
			{"kube-system", permission{"coordination.k8s.io", "leases", "create", ""}},
			{"<namespace>", permission{"coordination.k8s.io", "leases", "update", "custom-scheduler"}},
			{"kube-system", permission{"", "events", "create", ""}},
		},
		"kubelet-plugin": {
			{"cluster", permission{"resource.k8s.io", "resourceclaims", "list", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceclaims", "watch", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceclaims/status", "update", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceslices", "list", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceslices", "create", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceslices", "update", ""}},
			{"cluster", permission{"resource.k8s.io", "resourceslices", "delete", ""}},
			{"cluster", permission{"resource.k8s.io", "deviceclasses", "get", ""}},
			{"cluster", permission{"", "secrets", "get", ""}},
			{"cluster", permission{"", "pods", "list", ""}},
			{"cluster", permission{"", "nodes", "update", ""}},
			{"<namespace>", permission{"coordination.k8s.io", "leases", "create", ""}},
			{"<namespace>", permission{"", "events", "create", ""}},
		},
	}
	for _, role := range []struct {
		name  string
		pod   driverPod
		needs []scopedPermission
	}{{"controller", in.controller, controllerNeeds}, {"kubelet-plugin", in.plugin, pluginNeeds}} {
		client := clientOf(role.pod)
		for _, p := range role.needs {
			if !tc.selfAllowed(client, p.permission, ns(p.scope)) {
				t.Errorf("the %s's ServiceAccount may not %s: it needs it", role.name, p)
			}
		}
		for _, p := range refused[role.name] {
			if tc.selfAllowed(client, p.permission, ns(p.scope)) {
				t.Errorf("the %s's ServiceAccount may %s: it does not need it", role.name, p)
			}
		}
	}
	// A claim's get, allowed, is by name in any namespace: the kubelet asks
	// for claims of every namespace.
	if !tc.selfAllowed(clientOf(in.plugin), permission{"resource.k8s.io", "resourceclaims", "get", "any-claim"}, tc.ns) {
		t.Errorf("the kubelet plugin's ServiceAccount may not get a claim in %s", tc.ns)
	}
}
