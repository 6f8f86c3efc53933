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
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	basecompatibility "k8s.io/component-base/compatibility"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// kustomize renders a kustomization with kustomize's Go API, as
// kubectl apply -k does.
var kustomize = framework.Kustomize

// apply server-side applies objects with the admin's credentials, namespaces first.
func (tc *testContext) apply(objs []*unstructured.Unstructured) {
	tc.t.Helper()
	dyn := dynamic.NewForConfigOrDie(adminConfig)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(adminClient.Discovery()))
	ordered := append([]*unstructured.Unstructured{}, objs...)
	for i, o := range ordered {
		if o.GetKind() == "Namespace" {
			ordered[0], ordered[i] = ordered[i], ordered[0]
		}
	}
	for _, o := range ordered {
		gvk := o.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			tc.t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			tc.t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(mapping.Resource).Namespace(o.GetNamespace())
		}
		if _, err := ri.Patch(tc.ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "integration-test", Force: ptr.To(true)}); err != nil {
			tc.t.Fatalf("applying %s %s/%s: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates with a
// fresh token of the ServiceAccount, as a pod running under it would.
func (tc *testContext) serviceAccountKubeconfig(ns, name string) string {
	tc.t.Helper()
	tr, err := adminClient.CoreV1().ServiceAccounts(ns).CreateToken(tc.ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating a token for ServiceAccount %s/%s: %v", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: adminConfig.Host, CertificateAuthorityData: adminConfig.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	cfg.CurrentContext = "default"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		tc.t.Fatal(err)
	}
	return tc.writeFile(name+".kubeconfig", string(data))
}

var forbidden = regexp.MustCompile(`(?i)forbidden|cannot (list|watch|get|create|update|patch)`)

// installation is manifests/install applied to the API server.
type installation struct {
	objs []*unstructured.Unstructured
	// namespace holds the scheduler's ServiceAccount, config and lease.
	namespace string
	// config is the ConfigMap's scheduler config, with a clientConnection
	// that authenticates with the ServiceAccount's token.
	config *configv1.KubeSchedulerConfiguration
	// kubeconfig is a kubeconfig file with the ServiceAccount's token.
	kubeconfig string
	// container is the scheduler container of the Deployment.
	container v1.Container
	// serviceAccount is the Deployment's ServiceAccount, in namespace.
	serviceAccount string
}

// install applies manifests/install and reads what a test needs to run the
// scheduler as the Deployment does.
func (tc *testContext) install() *installation {
	tc.t.Helper()
	return tc.installObjects("manifests/install", kustomize(tc.t, "../../manifests/install"))
}

// installObjects applies objs, rendered from source (a kustomization or a
// chart), and reads what a test needs to run the scheduler as their
// Deployment does: its ConfigMap's config and the token of its
// ServiceAccount.
func (tc *testContext) installObjects(source string, objs []*unstructured.Unstructured) *installation {
	tc.t.Helper()
	in := &installation{objs: objs}
	tc.apply(in.objs)
	in.readObjects(tc.t, source)
	// In a pod the client comes from the in-cluster config; here from the
	// ServiceAccount's token. --kubeconfig is ignored next to --config.
	in.kubeconfig = tc.serviceAccountKubeconfig(in.namespace, in.serviceAccount)
	if in.config.ClientConnection != (componentbaseconfigv1alpha1.ClientConnectionConfiguration{}) {
		tc.t.Fatalf("the ConfigMap's config sets clientConnection itself (%+v); adapt the test", in.config.ClientConnection)
	}
	in.config.ClientConnection.Kubeconfig = in.kubeconfig
	return in
}

// readObjects reads the config of the ConfigMap, the scheduler container of
// the Deployment and the name of its ServiceAccount from in.objs.
func (in *installation) readObjects(t testing.TB, source string) {
	t.Helper()
	var found bool
	for _, o := range in.objs {
		switch o.GetKind() {
		case "ConfigMap":
			var cm v1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
				t.Fatal(err)
			}
			in.namespace = cm.Namespace
			if data := cm.Data["scheduler-config.yaml"]; data != "" {
				cfg, err := testconfig.Unmarshal([]byte(data))
				if err != nil {
					t.Fatalf("%s: the ConfigMap's scheduler-config.yaml: %v", source, err)
				}
				in.config = cfg
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			in.serviceAccount = d.Spec.Template.Spec.ServiceAccountName
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Name == "kube-scheduler" {
					in.container, found = c, true
				}
			}
		}
	}
	if in.config == nil {
		t.Fatalf("%s has no ConfigMap with scheduler-config.yaml", source)
	}
	if !found {
		t.Fatalf("%s has no Deployment with a kube-scheduler container", source)
	}
	if in.serviceAccount == "" {
		t.Fatalf("%s: the Deployment names no ServiceAccount", source)
	}
}

// schedulerArgs returns the arguments of the Deployment's container (its
// command after the binary, then its args) with --config pointing at a file
// that holds config (in.config unless a test changes it), and the secure port moved from 0.0.0.0:10259 to a free
// local port, which it returns. Nothing else is added: no --cert-dir, no
// --kubeconfig.
func (tc *testContext) schedulerArgs(in *installation, config *configv1.KubeSchedulerConfiguration) ([]string, int) {
	tc.t.Helper()
	c := in.container
	if len(c.Command) == 0 {
		tc.t.Fatal("the Deployment's kube-scheduler container has no command")
	}
	args := append(append([]string{}, c.Command[1:]...), c.Args...)
	configPath := testconfig.Write(tc.t, config)
	replaced := 0
	for i, a := range args {
		if path, ok := strings.CutPrefix(a, "--config="); ok {
			// The config file must be where the ConfigMap is mounted.
			var mounted bool
			for _, m := range c.VolumeMounts {
				mounted = mounted || path == m.MountPath+"/scheduler-config.yaml"
			}
			if !mounted {
				tc.t.Errorf("--config=%s is not scheduler-config.yaml in a volume mount of the container %v", path, c.VolumeMounts)
			}
			args[i] = "--config=" + configPath
			replaced++
		}
		if strings.HasPrefix(a, "--secure-port") || strings.HasPrefix(a, "--bind-address") {
			tc.t.Fatalf("the Deployment sets %s: adapt the test, which picks a free port", a)
		}
	}
	if replaced != 1 {
		tc.t.Fatalf("the Deployment's command %q has %d --config= flags, want 1", c.Command, replaced)
	}
	port, err := freePort()
	if err != nil {
		tc.t.Fatal(err)
	}
	return append(args, "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port)), port
}

// scheduleExamples creates manifests/examples in the test's namespace and
// waits for every pod to be bound, spread over nodes by at most one. The
// controllers make the Deployment's pods.
func (tc *testContext) scheduleExamples(nodes []string) {
	tc.t.Helper()
	var podNames []string
	for _, o := range kustomize(tc.t, "../../manifests/examples") {
		switch o.GetKind() {
		case "Pod":
			var pod v1.Pod
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &pod); err != nil {
				tc.t.Fatal(err)
			}
			pod.Namespace = tc.ns
			tc.createPod(&pod)
			podNames = append(podNames, pod.Name)
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				tc.t.Fatal(err)
			}
			if d.Spec.Template.Spec.SchedulerName != schedulerName {
				tc.t.Errorf("example Deployment %s uses scheduler %q, want %q", d.Name, d.Spec.Template.Spec.SchedulerName, schedulerName)
			}
			podNames = append(podNames, tc.createDeploymentPods(&d)...)
		}
	}
	if len(podNames) != 7 {
		tc.t.Fatalf("the examples make %d pods, want test-pod-1, test-pod-2 and 5 replicas", len(podNames))
	}
	tc.waitScheduled(podNames...)
	if counts := tc.podsPerNode(nodes, nil); spread(counts) > 1 {
		tc.t.Errorf("example pods per node %v: spread %d, want at most 1", counts, spread(counts))
	}
}

// TestInstallManifests applies manifests/install to the API server, runs the
// binary with the Deployment's arguments, the ServiceAccount's own token and
// the ConfigMap's config, and schedules the tutorial's examples: the RBAC
// must grant everything the scheduler does (no "forbidden" in its log),
// leader election must work on its own lease, and the HTTPS probes must
// answer.
func TestInstallManifests(t *testing.T) {
	tc := newTestContext(t)
	in := tc.install()
	nodes := tc.createNodes(makeNode("install-a"), makeNode("install-b"), makeNode("install-c"))
	args, port := tc.schedulerArgs(in, in.config)
	proc := tc.runBinary("installed-scheduler", args...)
	tc.waitForLeader([]*framework.Process{proc})
	tc.scheduleExamples(nodes)

	checkReadyz(t, tc.ctx, port)
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the scheduler running as the ServiceAccount was refused %d times (first: %q): the RBAC misses something", len(lines), lines[0])
	}
	if _, err := adminClient.CoordinationV1().Leases(in.namespace).Get(tc.ctx, "custom-scheduler", metav1.GetOptions{}); err != nil {
		t.Errorf("the scheduler's lease %s/custom-scheduler: %v", in.namespace, err)
	}
}

// checkReadyz calls /readyz on the secure port without credentials, as the
// Deployment's probe does, and expects 200.
func checkReadyz(t *testing.T, ctx context.Context, port int) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the scheduler's self-signed serving cert
	}}
	var last string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Errorf("GET /readyz on the secure port: %s", last)
	}
}

// permission is one verb on one resource (with its subresource) of one API
// group, on one object name or on any ("").
type permission struct {
	group, resource, verb, name string
}

func (p permission) String() string {
	s := p.verb + " " + p.resource
	if p.group != "" {
		s += "." + p.group
	}
	if p.name != "" {
		s += " named " + p.name
	}
	return s
}

// olderMinor tells whether this build's minor is older than the newest
// supported, the one the manifests and the chart are written for.
func olderMinor() bool {
	return kubeversion.Minor < kubeversion.Newest()
}

// servedResources returns the group and resource (subresources as
// "resource/sub") of everything the API server serves, in any version.
func servedResources(t *testing.T) map[permission]bool {
	t.Helper()
	_, lists, err := adminClient.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	served := map[permission]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			served[permission{group: gv.Group, resource: r.Name}] = true
		}
	}
	return served
}

// permissions breaks rules down into single permissions.
func permissions(t testing.TB, rules []rbacv1.PolicyRule) []permission {
	t.Helper()
	var out []permission
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			t.Fatalf("rule %v: non-resource URLs are not handled", r)
		}
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out = append(out, permission{group: g, resource: res, verb: v, name: n})
					}
				}
			}
		}
	}
	return out
}

// builtinKubeSchedulerRole returns the rules of system:kube-scheduler as the
// pinned k8s.io/kubernetes computes them with every alpha and beta feature
// gate on: everything the scheduler of that version may need, whatever gates
// a cluster turns on.
func builtinKubeSchedulerRole(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	var rules []rbacv1.PolicyRule
	// In a subtest, so that the gates are restored when it ends.
	t.Run("system:kube-scheduler with every gate on", func(t *testing.T) {
		// bootstrappolicy reads k8s.io/apiserver's DefaultFeatureGate, which
		// kube-scheduler's options register as the "kube" component's gate
		// (k8s.io/apiserver is not a direct dependency of this module).
		gate := options.NewOptions().ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
		featuregatetesting.SetFeatureGatesDuringTest(t, gate, featuregatetesting.FeatureOverrides{
			"AllAlpha": true,
			"AllBeta":  true,
		})
		for _, r := range bootstrappolicy.ClusterRoles() {
			if r.Name == "system:kube-scheduler" {
				rules = r.Rules
			}
		}
	})
	if len(rules) == 0 {
		t.Fatal("bootstrappolicy has no system:kube-scheduler")
	}
	return rules
}

// isLeaderElection reports whether p is about leader election, which
// the install grants through its own Role, never on the default
// scheduler's lease.
func isLeaderElection(p permission) bool {
	return p.group == "coordination.k8s.io" && (p.resource == "leases" || p.resource == "leasecandidates")
}

// TestInstallRBAC checks the ServiceAccount's permissions on the API
// server's authorizer, with the ServiceAccount's own token:
//   - it may do everything system:kube-scheduler of the pinned Kubernetes
//     grants (with every gate on), except leader election;
//   - the ClusterRole of clusterrole.yaml grants nothing beyond that but
//     pluginPermissions (Karpenter's NodeClaims read), which it grants;
//   - it may not touch the default scheduler's lease kube-system/kube-scheduler
//     (read, update, create, delete), neither asked nor tried;
//   - it may get, update and create its own lease.
func TestInstallRBAC(t *testing.T) {
	tc := newTestContext(t)
	in := tc.install()
	saConfig, err := clientcmd.BuildConfigFromFlags("", in.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	saConfig.QPS, saConfig.Burst = 200, 200 // some 100 access reviews
	sa := kubernetes.NewForConfigOrDie(saConfig)
	allowed := func(p permission, namespace string) bool {
		t.Helper()
		resource, sub, _ := strings.Cut(p.resource, "/")
		review, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(tc.ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: p.verb, Group: p.group, Resource: resource, Subresource: sub, Name: p.name,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectAccessReview for %s: %v", p, err)
		}
		return review.Status.Allowed
	}

	// Built for an older minor, the test lets the manifests grant what its
	// API server does not serve (a newer minor's resource, which its
	// system:kube-scheduler cannot know), and lets them leave out what that
	// system:kube-scheduler grants on a resource its API server does not
	// serve (1.35's alpha workloads.scheduling.k8s.io, which only its
	// GangScheduling gate uses and the newer minors dropped).
	older := olderMinor()
	var served map[permission]bool
	if older {
		served = servedResources(t)
	}
	builtin := permissions(t, builtinKubeSchedulerRole(t))
	// Every namespace ("") is what the scheduler's informers list and watch.
	for _, p := range builtin {
		if older && !isLeaderElection(p) && !served[permission{group: p.group, resource: p.resource}] {
			t.Logf("system:kube-scheduler grants %s, which this %s API server does not serve", p, kubeversion.String())
			continue
		}
		if !isLeaderElection(p) && !allowed(p, "") {
			t.Errorf("the ServiceAccount may not %s in every namespace; system:kube-scheduler grants it: add it to clusterrole.yaml", p)
		}
	}

	var role *rbacv1.ClusterRole
	for _, o := range in.objs {
		if o.GetKind() == "ClusterRole" && o.GetName() == "adminsched:custom-scheduler" {
			role = &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if role == nil {
		t.Error("manifests/install has no ClusterRole adminsched:custom-scheduler")
		role = &rbacv1.ClusterRole{}
	}
	for _, p := range permissions(t, role.Rules) {
		if p.group == "*" || p.resource == "*" || p.verb == "*" {
			t.Errorf("clusterrole.yaml grants %s: no wildcards", p)
		}
		if slices.Contains(pluginPermissions, p) {
			continue
		}
		if isLeaderElection(p) || !slices.Contains(builtin, p) {
			if older && !isLeaderElection(p) && !served[permission{group: p.group, resource: p.resource}] {
				t.Logf("clusterrole.yaml grants %s, which this %s API server does not serve: a newer minor's", p, kubeversion.String())
				continue
			}
			t.Errorf("clusterrole.yaml grants %s, which system:kube-scheduler does not, or which is leader election", p)
		}
	}

	// Our plugins' own reads; RBAC grants them whether or not the API
	// server serves the resource.
	for _, p := range pluginPermissions {
		if !allowed(p, "") {
			t.Errorf("the ServiceAccount may not %s in every namespace: one of our plugins reads it; add it to clusterrole.yaml", p)
		}
	}

	// The default scheduler's lease, asked of the authorizer.
	for _, verb := range []string{"get", "update", "patch", "delete", "create", "list", "watch"} {
		p := permission{group: "coordination.k8s.io", resource: "leases", verb: verb, name: "kube-scheduler"}
		if verb == "create" || verb == "list" || verb == "watch" {
			p.name = "" // not authorized by name
		}
		if allowed(p, "kube-system") {
			t.Errorf("the ServiceAccount may %s in kube-system: it could take the default scheduler's lease", p)
		}
	}
	if p := (permission{group: "coordination.k8s.io", resource: "leasecandidates", verb: "create"}); allowed(p, "kube-system") {
		t.Errorf("the ServiceAccount may %s in kube-system", p)
	}
	// Its own lease.
	for _, p := range []permission{
		{group: "coordination.k8s.io", resource: "leases", verb: "get", name: "custom-scheduler"},
		{group: "coordination.k8s.io", resource: "leases", verb: "update", name: "custom-scheduler"},
		{group: "coordination.k8s.io", resource: "leases", verb: "create"},
	} {
		if !allowed(p, in.namespace) {
			t.Errorf("the ServiceAccount may not %s in %s: leader election needs it", p, in.namespace)
		}
	}

	// The default scheduler's lease, tried with the ServiceAccount's token.
	// envtest runs no default scheduler: create its lease as it would.
	leases := adminClient.CoordinationV1().Leases("kube-system")
	lease, err := leases.Create(tc.ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("default-scheduler_0"), LeaseDurationSeconds: ptr.To[int32](15)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the default scheduler's lease: %v", err)
	}
	t.Cleanup(func() {
		// Other tests check that this lease does not exist.
		if err := leases.Delete(context.Background(), "kube-scheduler", metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting kube-system/kube-scheduler: %v", err)
		}
	})
	saLeases := sa.CoordinationV1().Leases("kube-system")
	if _, err := saLeases.Get(tc.ctx, "kube-scheduler", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get kube-system/kube-scheduler as the ServiceAccount: %v, want forbidden", err)
	}
	taken := lease.DeepCopy()
	taken.Spec.HolderIdentity = ptr.To("custom-scheduler_0")
	if _, err := saLeases.Update(tc.ctx, taken, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("update kube-system/kube-scheduler as the ServiceAccount: %v, want forbidden", err)
	}
	if err := saLeases.Delete(tc.ctx, "kube-scheduler", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete kube-system/kube-scheduler as the ServiceAccount: %v, want forbidden", err)
	}
	if _, err := saLeases.Create(tc.ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-2"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create a lease in kube-system as the ServiceAccount: %v, want forbidden", err)
	}

	// The binary, with a config that leaves leaderElection's lease to its
	// defaults (kube-system/kube-scheduler): refused, it never leads.
	if le := in.config.LeaderElection; le.ResourceName == "" || le.ResourceNamespace == "" {
		t.Fatalf("the config names no lease of its own (%s/%s): adapt the test", le.ResourceNamespace, le.ResourceName)
	}
	config := in.config.DeepCopy()
	config.LeaderElection.ResourceName, config.LeaderElection.ResourceNamespace = "", ""
	args, _ := tc.schedulerArgs(in, config)
	proc := tc.runBinary("default-lease-scheduler", args...)
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		if proc.Exited() {
			return false, fmt.Errorf("%s exited", proc.Name)
		}
		return defaultLeaseRefused.MatchString(proc.Output()), nil
	})
	if err != nil {
		t.Errorf("waiting for the scheduler to be refused kube-system/kube-scheduler: %v", err)
	} else {
		t.Logf("refused as expected: %s", strings.TrimSpace(defaultLeaseRefused.FindString(proc.Output())))
	}
	proc.Stop()
	if strings.Contains(proc.Output(), "Successfully acquired lease") {
		t.Errorf("the scheduler acquired a lease with the default leaderElection")
	}
	got, err := leases.Get(tc.ctx, "kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(got.Spec.HolderIdentity, ""); h != "default-scheduler_0" {
		t.Errorf("kube-system/kube-scheduler is held by %q, want default-scheduler_0 still", h)
	}
}

// pluginPermissions are what clusterrole.yaml grants beyond
// system:kube-scheduler: Karpenter's NodeClaims, which MaintenanceWindow
// reads when the API server serves them, and the NodePoolQuotas that
// NodePoolQuota reads.
var pluginPermissions = []permission{
	{group: "karpenter.sh", resource: "nodeclaims", verb: "get"},
	{group: "karpenter.sh", resource: "nodeclaims", verb: "list"},
	{group: "karpenter.sh", resource: "nodeclaims", verb: "watch"},
	{group: "scheduling.adminsched.io", resource: "nodepoolquotas", verb: "get"},
	{group: "scheduling.adminsched.io", resource: "nodepoolquotas", verb: "list"},
	{group: "scheduling.adminsched.io", resource: "nodepoolquotas", verb: "watch"},
}

var (
	// defaultLeaseRefused matches client-go's log line for a refused
	// lease: "Error retrieving lease lock" err="... is forbidden ..."
	// lock="kube-system/kube-scheduler".
	defaultLeaseRefused = regexp.MustCompile(`(?m)^.*is forbidden.*lock="kube-system/kube-scheduler".*$`)
)
