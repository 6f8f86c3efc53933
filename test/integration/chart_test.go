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
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/pkg/plugins"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

const (
	chartDir = "../../manifests/install/charts/adminsched-scheduler"
	// chartRelease is the release name of every test: the chart's objects
	// are named adminsched-scheduler, adminsched:adminsched-scheduler...
	chartRelease = "adminsched-scheduler"
)

// helmBinary returns bin/helm (or HELM_BINARY), which make helm builds from
// hack/tools/helm/go.mod. The chart tests never skip: without helm they fail.
func helmBinary(t testing.TB) string {
	t.Helper()
	return toolBinary(t, "HELM_BINARY", "helm", "the chart tests run helm")
}

// toolBinary returns the path in the environment variable env, or
// bin/<name>, which `make <name>` builds; without it the test fails.
func toolBinary(t testing.TB, env, name, why string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path, _ = filepath.Abs("../../bin/" + name)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: build it with `make %s`, or set %s: %v", why, name, env, err)
	}
	return path
}

// runHelm runs helm with args and returns its stdout; err carries stderr.
func runHelm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helmBinary(t), args...)
	// No repositories, plugins or caches of the user's.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// helmTemplate renders the chart as `helm install` would, in namespace.
func helmTemplate(t testing.TB, namespace string, args ...string) (string, error) {
	t.Helper()
	return helmTemplateRelease(t, chartRelease, chartDir, namespace, args...)
}

// helmTemplateRelease renders chart (a directory or a packaged .tgz) as
// release in namespace.
func helmTemplateRelease(t testing.TB, release, chart, namespace string, args ...string) (string, error) {
	t.Helper()
	return runHelm(t, append([]string{"template", release, chart, "--namespace", namespace}, args...)...)
}

// renderChart renders the chart and decodes its objects; it fails the test
// if helm does.
func renderChart(t testing.TB, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return renderRelease(t, chartRelease, chartDir, namespace, args...)
}

// renderRelease renders chart as release in namespace and decodes its
// objects; it fails the test if helm does.
func renderRelease(t testing.TB, release, chart, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helmTemplateRelease(t, release, chart, namespace, args...)
	if err != nil {
		t.Fatal(err)
	}
	return decodeObjects(t, out)
}

// decodeObjects decodes the objects of a multi-document YAML stream, as
// helm template prints them.
func decodeObjects(t testing.TB, out string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding helm template's output: %v\n%s", err, out)
		}
		if len(m) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetKind() == "" || o.GetName() == "" {
			t.Fatalf("helm template rendered an object without kind or name: %v", m)
		}
		objs = append(objs, o)
	}
	return objs
}

// TestChartLint runs helm lint --strict on the defaults, with the
// ServiceMonitor on, with several profiles, and with the ServiceAccount,
// RBAC and config left to the user.
func TestChartLint(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--set", "serviceMonitor.enabled=true"},
		{"--set-json", `profiles=[{"schedulerName":"a","percentageOfNodesToScore":50},{"schedulerName":"b","plugins":{"multiPoint":{"enabled":[{"name":"PlacementPolicy"}]}}}]`},
		{"--set", "serviceAccount.create=false", "--set", "serviceAccount.name=sa", "--set", "rbac.create=false", "--set", "config.existingConfigMap=cm"},
	} {
		out, err := runHelm(t, append([]string{"lint", "--strict", chartDir}, args...)...)
		if err != nil {
			t.Errorf("helm lint --strict %v: %v\n%s", args, err, out)
		}
	}
}

// TestChartInstall applies the chart's default rendering server-side to the
// API server, runs the binary with the Deployment's arguments, the chart
// ServiceAccount's own token and the ConfigMap's config, and schedules the
// tutorial's examples: the chart's RBAC must grant everything the scheduler
// does (no "forbidden" in its log), the scheduler takes its own lease in the
// release namespace, and /readyz answers.
func TestChartInstall(t *testing.T) {
	tc := newTestContext(t)
	in := tc.installObjects("the chart", renderChart(t, tc.ns))
	if in.namespace != tc.ns {
		t.Errorf("the chart's ConfigMap is in %q, want the release namespace %q", in.namespace, tc.ns)
	}
	nodes := tc.createNodes(makeNode("chart-a"), makeNode("chart-b"), makeNode("chart-c"))
	args, port := tc.schedulerArgs(in, in.config)
	proc := tc.runBinary("chart-scheduler", args...)
	tc.waitForLeader([]*framework.Process{proc})
	tc.scheduleExamples(nodes)

	checkReadyz(t, tc.ctx, port)
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the scheduler running as the chart's ServiceAccount was refused %d times (first: %q): the chart's RBAC misses something", len(lines), lines[0])
	}
	// The lease is named after the release: chartRelease's fullname.
	lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, chartRelease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the scheduler's lease %s/%s: %v", tc.ns, chartRelease, err)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h == "" {
		t.Errorf("the lease %s/%s has no holder", tc.ns, chartRelease)
	}
	if _, err := adminClient.CoordinationV1().Leases("kube-system").Get(tc.ctx, "kube-scheduler", metav1.GetOptions{}); err == nil {
		t.Errorf("kube-system/kube-scheduler exists: the chart's scheduler must never create the default scheduler's lease")
	}
}

// TestChartConfigDefaults holds the chart's default profile equal to
// manifests/nodelesspods/scheduler-config.yaml's.
func TestChartConfigDefaults(t *testing.T) {
	in := &installation{objs: renderChart(t, "adminsched-system")}
	in.readObjects(t, "the chart")
	const file = "../../manifests/nodelesspods/scheduler-config.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := testconfig.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	// Args compare as the JSON values their YAML holds.
	args := cmp.Transformer("args", func(c configv1.PluginConfig) (v struct {
		Name string
		Args any
	}) {
		v.Name = c.Name
		if err := json.Unmarshal(c.Args.Raw, &v.Args); err != nil {
			t.Errorf("pluginConfig %s: args %s: %v", c.Name, c.Args.Raw, err)
		}
		return v
	})
	if diff := cmp.Diff(want.Profiles, in.config.Profiles, args); diff != "" {
		t.Errorf("the chart's default profiles differ from those of %s (-file, +chart):\n%s", file, diff)
	}
	wantLE := componentbaseconfigv1alpha1.LeaderElectionConfiguration{
		LeaderElect: ptr.To(true), ResourceName: chartRelease, ResourceNamespace: "adminsched-system",
	}
	if diff := cmp.Diff(wantLE, in.config.LeaderElection); diff != "" {
		t.Errorf("the chart's default leaderElection (-want, +got):\n%s", diff)
	}
}

// rbacOf returns the rules of every ClusterRole and Role in objs, as
// permissions keyed by the role's kind, and the roles the ServiceAccount sa
// is bound to ("ClusterRole name", "Role name [in kube-system]"), with
// fullname, the prefix of the object names, replaced by "<release>" and
// lease, the name of the leader-election lease, by "<lease>" so that the
// kustomization and the chart compare.
func rbacOf(t *testing.T, objs []*unstructured.Unstructured, sa, fullname, lease string) (map[string][]permission, []string) {
	t.Helper()
	perms := map[string][]permission{}
	var bindings []string
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			var r rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			for _, p := range permissions(t, r.Rules) {
				if p.name == lease {
					p.name = "<lease>"
				}
				perms[o.GetKind()] = append(perms[o.GetKind()], p)
			}
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			var ours bool
			for _, s := range b.Subjects {
				ours = ours || (s.Kind == "ServiceAccount" && s.Name == sa)
			}
			if !ours {
				continue
			}
			ref := b.RoleRef.Kind + " " + strings.ReplaceAll(b.RoleRef.Name, fullname, "<release>")
			if b.Namespace == "kube-system" {
				ref += " in kube-system"
			}
			bindings = append(bindings, ref)
		}
	}
	sort.Strings(bindings)
	return perms, bindings
}

// TestChartRBAC holds the chart's default RBAC equal to manifests/install's:
// the same ClusterRole and Role rules and the same bindings. TestInstallRBAC
// checks those against the pinned Kubernetes' system:kube-scheduler. It also
// asks the API server's authorizer, with the chart ServiceAccount's token,
// that the default scheduler's lease is out of reach and its own is not.
func TestChartRBAC(t *testing.T) {
	chart := renderChart(t, "adminsched-system")
	// The kustomization's names start with custom-scheduler (its
	// ServiceAccount, adminsched:custom-scheduler...), the chart's with the
	// release name, and so does the chart's lease.
	gotPerms, gotBindings := rbacOf(t, chart, chartRelease, chartRelease, chartRelease)
	wantPerms, wantBindings := rbacOf(t, kustomize(t, "../../manifests/install"), "custom-scheduler", "custom-scheduler", "custom-scheduler")
	for _, kind := range []string{"ClusterRole", "Role"} {
		got, want := slices.Clone(gotPerms[kind]), slices.Clone(wantPerms[kind])
		sort.Slice(got, func(i, j int) bool { return got[i].String() < got[j].String() })
		sort.Slice(want, func(i, j int) bool { return want[i].String() < want[j].String() })
		for _, p := range got {
			if !slices.Contains(want, p) {
				t.Errorf("the chart's %s grants %s, manifests/install's does not", kind, p)
			}
		}
		for _, p := range want {
			if !slices.Contains(got, p) {
				t.Errorf("the chart's %s misses %s, which manifests/install's grants", kind, p)
			}
		}
	}
	if !slices.Equal(gotBindings, wantBindings) {
		t.Errorf("the chart binds its ServiceAccount to %q, manifests/install to %q", gotBindings, wantBindings)
	}

	// On the API server, in a namespace of its own.
	tc := newTestContext(t)
	in := tc.installObjects("the chart", renderChart(t, tc.ns))
	sa := tc.serviceAccountClient(in.kubeconfig)
	allowed := func(p permission, namespace string) bool {
		t.Helper()
		return tc.selfAllowed(sa, p, namespace)
	}
	for _, verb := range []string{"get", "update", "patch", "delete", "create"} {
		p := permission{group: "coordination.k8s.io", resource: "leases", verb: verb, name: "kube-scheduler"}
		if verb == "create" {
			p.name = ""
		}
		if allowed(p, "kube-system") {
			t.Errorf("the chart's ServiceAccount may %s in kube-system: it could take the default scheduler's lease", p)
		}
	}
	for _, p := range []permission{
		{group: "coordination.k8s.io", resource: "leases", verb: "get", name: chartRelease},
		{group: "coordination.k8s.io", resource: "leases", verb: "update", name: chartRelease},
		{group: "coordination.k8s.io", resource: "leases", verb: "create"},
	} {
		if !allowed(p, tc.ns) {
			t.Errorf("the chart's ServiceAccount may not %s in the release namespace: leader election needs it", p)
		}
	}
	if p := (permission{resource: "pods", verb: "list"}); !allowed(p, "") {
		t.Errorf("the chart's ServiceAccount may not %s in every namespace", p)
	}
}

// TestChartSchemaPluginNames holds the schema's plugin names equal to the
// plugins the binary registers (the in-tree registry of the pinned
// Kubernetes and pkg/plugins'), its per-plugin args rules to pkg/plugins'
// plugins, and its extension points equal to the config API's.
func TestChartSchemaPluginNames(t *testing.T) {
	const file = "values.schema.json"
	data, err := os.ReadFile(filepath.Join(chartDir, file))
	if err != nil {
		t.Fatal(err)
	}
	type argsRule struct {
		If struct {
			Properties struct {
				Name struct {
					Const string `json:"const"`
				} `json:"name"`
			} `json:"properties"`
		} `json:"if"`
		Then struct {
			Properties struct {
				Args struct {
					Ref string `json:"$ref"`
				} `json:"args"`
			} `json:"properties"`
		} `json:"then"`
	}
	type ref struct {
		Ref string `json:"$ref"`
	}
	// plugins and pluginConfig are definitions that the single profile of
	// the top level and each item of profiles refer to.
	var schema struct {
		Definitions map[string]struct {
			Enum       []string       `json:"enum"`
			Properties map[string]any `json:"properties"`
			Items      struct {
				AllOf []argsRule `json:"allOf"`
			} `json:"items"`
		} `json:"definitions"`
		Properties map[string]ref `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var profile struct {
		Definitions struct {
			Profile struct {
				Properties map[string]ref `json:"properties"`
			} `json:"profile"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(data, &profile); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, name := range []string{"plugins", "pluginConfig"} {
		want := "#/definitions/" + name
		if got := schema.Properties[name].Ref; got != want {
			t.Errorf("%s properties.%s refers to %q, want %q", file, name, got, want)
		}
		if got := profile.Definitions.Profile.Properties[name].Ref; got != want {
			t.Errorf("%s definitions.profile.properties.%s refers to %q, want %q", file, name, got, want)
		}
	}
	want := plugins.Names()
	for name := range frameworkplugins.NewInTreeRegistry() {
		want = append(want, name)
	}
	// The schema is for the newest minor: built for an older one, the test
	// lets it name a newer minor's plugins and extension points.
	missing, extra := nameDiff(want, schema.Definitions["pluginName"].Enum)
	if len(extra) > 0 && olderMinor() {
		t.Logf("%s definitions.pluginName.enum names %q, which %s lacks: a newer minor's", file, extra, kubeversion.String())
		extra = nil
	}
	if len(missing)+len(extra) > 0 {
		t.Errorf("%s definitions.pluginName.enum: missing %q, extra %q (want the in-tree registry and pkg/plugins)", file, missing, extra)
	}
	// Each of our plugins has a rule that checks its args against a
	// definition of the schema.
	var argsRules []string
	for _, rule := range schema.Definitions["pluginConfig"].Items.AllOf {
		name, ref := rule.If.Properties.Name.Const, rule.Then.Properties.Args.Ref
		argsRules = append(argsRules, name)
		def, ok := strings.CutPrefix(ref, "#/definitions/")
		if _, found := schema.Definitions[def]; !ok || !found {
			t.Errorf("%s: the args rule of %s refers to %q, which is not a definition of the schema", file, name, ref)
		}
	}
	if missing, extra := nameDiff(plugins.Names(), argsRules); len(missing)+len(extra) > 0 {
		t.Errorf("%s definitions.pluginConfig.items.allOf (args rules by plugin name): missing %q, extra %q (want pkg/plugins' plugins)", file, missing, extra)
	}
	checkOnDemandShareArgsSchema(t)

	// The extension points: the fields of KubeSchedulerConfiguration's
	// Plugins in the pinned k8s.io/kube-scheduler.
	var points []string
	typ := reflect.TypeFor[configv1.Plugins]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		points = append(points, name)
	}
	got := slices.Collect(maps.Keys(schema.Definitions["plugins"].Properties))
	slices.Sort(got)
	slices.Sort(points)
	if olderMinor() {
		if missing, extra := nameDiff(points, got); len(missing) == 0 {
			t.Logf("%s definitions.plugins.properties has %q, which %s lacks: a newer minor's", file, extra, kubeversion.String())
			got = points
		}
	}
	if !slices.Equal(got, points) {
		t.Errorf("%s definitions.plugins.properties = %q,\nKubeSchedulerConfiguration's plugins has %q", file, got, points)
	}
}

// nameDiff returns the names of want that got lacks and those of got that
// want lacks, each sorted.
func nameDiff(want, got []string) (missing, extra []string) {
	for _, n := range want {
		if !slices.Contains(got, n) {
			missing = append(missing, n)
		}
	}
	for _, n := range got {
		if !slices.Contains(want, n) {
			extra = append(extra, n)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

// TestChartBadValues checks that bad values fail at helm template (the
// schema, or a template's fail) with the field named, and so does a cluster
// outside the supported kube-apiserver versions (Chart.yaml kubeVersion).
func TestChartBadValues(t *testing.T) {
	checkBadValues(t, []badValues{
		{"the default scheduler's lease", []string{"--set", "leaderElection.resourceName=kube-scheduler"},
			[]string{"leaderElection.resourceName"}},
		{"NodeLessPods mode Fewest", []string{"--set-json", `pluginConfig=[{"name":"NodeLessPods","args":{"mode":"Fewest"}}]`},
			[]string{"/pluginConfig/0/args/mode", "LeastPods"}},
		{"an unknown NodeLessPods arg", []string{"--set-json", `pluginConfig=[{"name":"NodeLessPods","args":{"weight":2}}]`},
			[]string{"/pluginConfig/0/args", "weight"}},
		{"a pluginConfig entry without a name", []string{"--set-json", `pluginConfig=[{"args":{"mode":"MostPods"}}]`},
			[]string{"/pluginConfig/0", "name"}},
		{"an unknown plugin enabled", []string{"--set", "plugins.multiPoint.enabled[0].name=NodeLessPod"},
			[]string{"/plugins/multiPoint/enabled/0/name"}},
		{"an unknown plugin configured", []string{"--set-json", `pluginConfig=[{"name":"NodeLesPods"}]`},
			[]string{"/pluginConfig/0/name"}},
		{"an unknown extension point", []string{"--set", "plugins.scoring.enabled[0].name=NodeLessPods"},
			[]string{"/plugins", "scoring"}},
		{"an unknown top-level value", []string{"--set", "replica=3"},
			[]string{"replica"}},
		{"an OnDemandShare policy above 100 percent", []string{"--set-json", `pluginConfig=[{"name":"OnDemandShare","args":{"policies":[{"name":"web","namespaces":["shop"],"minOnDemandPercent":150}]}}]`},
			[]string{"/pluginConfig/0/args/policies/0/minOnDemandPercent"}},
		{"an unknown OnDemandShare policy field", []string{"--set-json", `pluginConfig=[{"name":"OnDemandShare","args":{"policies":[{"name":"web","namespaces":["shop"],"minOnDemand":1}]}}]`},
			[]string{"/pluginConfig/0/args/policies/0", "minOnDemand"}},
		{"a PlacementPolicy rule with a bad action", []string{"--set-json", `pluginConfig=[{"name":"PlacementPolicy","args":{"rules":[{"name":"r","action":"Avoid"}]}}]`},
			[]string{"/pluginConfig/0/args/rules/0/action"}},
		{"replicas as a string", []string{"--set-string", "replicas=two"},
			[]string{"/replicas"}},
		{"a bad pull policy", []string{"--set", "image.pullPolicy=Sometimes"},
			[]string{"/image/pullPolicy"}},
		{"several replicas without leader election", []string{"--set", "leaderElection.leaderElect=false"},
			[]string{"leaderElection.leaderElect"}},
		{"a PodDisruptionBudget without a bound", []string{"--set", "podDisruptionBudget.maxUnavailable=null"},
			[]string{"podDisruptionBudget"}},
		{"a cluster older than the supported skew", []string{"--kube-version", "1.36.0"},
			[]string{"kubeVersion"}},
	})
}

// badValues are values that helm template must refuse, with the strings
// its error must hold (the field's path or name).
type badValues struct {
	name string
	args []string
	want []string
}

func checkBadValues(t *testing.T, cases []badValues) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			out, err := helmTemplate(t, "adminsched-system", tt.args...)
			if err == nil {
				t.Fatalf("helm template %v rendered:\n%s", tt.args, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("helm template %v failed without naming %q: %v", tt.args, w, err)
				}
			}
		})
	}
}

// TestChartBadArgsAtStartUp checks the second line of defence: plugin args
// the schema cannot check (in-tree plugins' args are free-form in the
// schema), or that reach the cluster without it (helm
// --skip-schema-validation), make the scheduler exit at start-up with the
// field named, before it schedules anything.
func TestChartBadArgsAtStartUp(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"NodeLessPods mode Fewest past the schema",
			[]string{"--skip-schema-validation", "--set-json", `pluginConfig=[{"name":"NodeLessPods","args":{"mode":"Fewest"}}]`},
			[]string{`NodeLessPods args: mode: Unsupported value`, "Fewest"}},
		{"NodeResourcesFit with an unknown scoring strategy",
			[]string{"--set-json", `pluginConfig=[{"name":"NodeResourcesFit","args":{"scoringStrategy":{"type":"Fewest"}}}]`},
			[]string{`NodeResourcesFit`, `scoringStrategy.type: Unsupported value`, "Fewest"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			in := &installation{objs: renderChart(t, tc.ns, tt.args...)}
			in.readObjects(t, "the chart")
			// It exits at start-up, when it builds the profile's plugins,
			// before it takes a lease: the admin's kubeconfig grants nothing
			// it uses.
			config := in.config.DeepCopy()
			config.ClientConnection.Kubeconfig = adminKubeconfig
			args, _ := tc.schedulerArgs(in, config)
			proc := tc.runBinary("bad-args-scheduler", args...)
			err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
				return proc.Exited(), nil
			})
			if err != nil {
				t.Fatalf("the scheduler did not exit with %v: %v", tt.args, err)
			}
			if proc.ProcessState().Success() {
				t.Errorf("the scheduler exited with status 0")
			}
			for _, w := range tt.want {
				if !strings.Contains(proc.Output(), w) {
					t.Errorf("the scheduler's error does not name %q:\n%s", w, proc.Output())
				}
			}
			if strings.Contains(proc.Output(), "Successfully acquired lease") {
				t.Errorf("the scheduler started leading with bad args")
			}
		})
	}
}

// TestChartMetrics renders the chart with the ServiceMonitor on and checks,
// on the API server, that the identity named in
// serviceMonitor.metricsReaderSubjects may GET /metrics on the secure port
// and another may not. The ServiceMonitor itself is not applied (envtest
// serves no monitoring.coreos.com CRDs): its port must be the Service's.
func TestChartMetrics(t *testing.T) {
	tc := newTestContext(t)
	objs := renderChart(t, tc.ns, "--set", "serviceMonitor.enabled=true",
		"--set-json", fmt.Sprintf(`serviceMonitor.metricsReaderSubjects=[{"kind":"ServiceAccount","name":"prometheus","namespace":%q}]`, tc.ns))
	var rest []*unstructured.Unstructured
	var monitor *unstructured.Unstructured
	var service v1.Service
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceMonitor":
			monitor = o
			continue
		case "Service":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &service); err != nil {
				t.Fatal(err)
			}
		}
		rest = append(rest, o)
	}
	if monitor == nil || service.Name == "" {
		t.Fatal("serviceMonitor.enabled=true rendered no ServiceMonitor or no Service")
	}
	if monitor.GetAPIVersion() != "monitoring.coreos.com/v1" {
		t.Errorf("the ServiceMonitor's apiVersion is %s", monitor.GetAPIVersion())
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(endpoints))
	}
	ep, _ := endpoints[0].(map[string]any)
	if len(service.Spec.Ports) != 1 || ep["port"] != service.Spec.Ports[0].Name || service.Spec.Ports[0].Port != 10259 || ep["scheme"] != "https" || ep["path"] != "/metrics" {
		t.Errorf("the ServiceMonitor's endpoint %v does not scrape https /metrics on the Service's port %v", ep, service.Spec.Ports)
	}

	for _, name := range []string{"prometheus", "someone-else"} {
		if _, err := adminClient.CoreV1().ServiceAccounts(tc.ns).Create(tc.ctx,
			&v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := tc.installObjects("the chart", rest)
	args, port := tc.schedulerArgs(in, in.config)
	// In a pod, the secure port's delegated authentication and
	// authorization use the in-cluster config, the ServiceAccount's token;
	// out of a cluster they need these flags, or every token is refused.
	args = append(args, "--authentication-kubeconfig="+in.kubeconfig, "--authorization-kubeconfig="+in.kubeconfig)
	proc := tc.runBinary("chart-metrics-scheduler", args...)
	tc.waitForLeader([]*framework.Process{proc})
	checkReadyz(t, tc.ctx, port)

	for name, want := range map[string]int{"prometheus": http.StatusOK, "someone-else": http.StatusForbidden} {
		tr, err := adminClient.CoreV1().ServiceAccounts(tc.ns).CreateToken(tc.ctx, name, tokenRequest(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := getMetrics(t, tc.ctx, port, tr.Status.Token); got != want {
			t.Errorf("GET /metrics as %s/%s: %d, want %d", tc.ns, name, got, want)
		}
	}
	// The delegated authentication reads kube-system/extension-apiserver-authentication
	// (the chart's RoleBinding there) and calls TokenReview and
	// SubjectAccessReview (system:auth-delegator): nothing may be refused.
	if lines := forbidden.FindAllString(proc.Output(), -1); len(lines) > 0 {
		t.Errorf("the scheduler running as the chart's ServiceAccount was refused %d times (first: %q)", len(lines), lines[0])
	}
}

// getMetrics calls GET /metrics on the secure port with a bearer token, as
// Prometheus does, and returns the status code (retrying on connection
// errors while the server comes up).
func getMetrics(t *testing.T, ctx context.Context, port int, token string) int {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the scheduler's self-signed serving cert
	}}
	code := 0
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		code = resp.StatusCode
		return true, nil
	})
	if err != nil {
		t.Errorf("GET /metrics: %v", err)
	}
	return code
}

func tokenRequest() *authenticationv1.TokenRequest {
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
}

// serviceAccountClient is a clientset on a kubeconfig written by
// serviceAccountKubeconfig.
func (tc *testContext) serviceAccountClient(kubeconfig string) kubernetes.Interface {
	tc.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tc.t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// selfAllowed asks the API server's authorizer whether the client's
// identity may do p in namespace ("" for every namespace).
func (tc *testContext) selfAllowed(client kubernetes.Interface, p permission, namespace string) bool {
	tc.t.Helper()
	resource, sub, _ := strings.Cut(p.resource, "/")
	review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(tc.ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: p.verb, Group: p.group, Resource: resource, Subresource: sub, Name: p.name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("SelfSubjectAccessReview for %s: %v", p, err)
	}
	return review.Status.Allowed
}
