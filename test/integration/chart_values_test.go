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
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
)

// previousChart is chart 0.37.0 as `helm package` made it before the chart
// took several profiles and a lease named after the release: the release
// users upgrade from.
const previousChart = "testdata/charts/adminsched-scheduler-0.37.0.tgz"

// rendered is what the chart tests read from a rendering.
type rendered struct {
	objs []*unstructured.Unstructured
}

// ofKind returns the objects of kind.
func (r rendered) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range r.objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// into converts the only object of kind into out; it fails the test if
// there is not exactly one.
func (r rendered) into(t *testing.T, kind string, out any) {
	t.Helper()
	objs := r.ofKind(kind)
	if len(objs) != 1 {
		t.Fatalf("the chart rendered %d %ss, want 1", len(objs), kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, out); err != nil {
		t.Fatal(err)
	}
}

func (r rendered) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	r.into(t, "Deployment", &d)
	return &d
}

// configText returns the ConfigMap's scheduler-config.yaml.
func (r rendered) configText(t *testing.T) string {
	t.Helper()
	var cm v1.ConfigMap
	r.into(t, "ConfigMap", &cm)
	return cm.Data["scheduler-config.yaml"]
}

func (r rendered) config(t *testing.T) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := testconfig.Unmarshal([]byte(r.configText(t)))
	if err != nil {
		t.Fatalf("the ConfigMap's scheduler-config.yaml: %v", err)
	}
	return cfg
}

// leaseRole returns the lease names the leader-election Role grants get and
// update on, and its namespace.
func (r rendered) leaseRole(t *testing.T) ([]string, string) {
	t.Helper()
	var role rbacv1.Role
	r.into(t, "Role", &role)
	var names []string
	for _, rule := range role.Rules {
		names = append(names, rule.ResourceNames...)
	}
	return names, role.Namespace
}

func render(t *testing.T, args ...string) rendered {
	t.Helper()
	return rendered{objs: renderChart(t, "adminsched-system", args...)}
}

// valuesFile writes a values file for helm's -f.
func valuesFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// profileArgs returns each profile's pluginConfig args as JSON values, by
// schedulerName and plugin name.
func profileArgs(t *testing.T, cfg *configv1.KubeSchedulerConfiguration) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range cfg.Profiles {
		name := ptr.Deref(p.SchedulerName, "")
		out[name] = map[string]any{}
		for _, c := range p.PluginConfig {
			var v any
			if err := json.Unmarshal(c.Args.Raw, &v); err != nil {
				t.Fatalf("profile %s pluginConfig %s: %v", name, c.Name, err)
			}
			out[name][c.Name] = v
		}
	}
	return out
}

// TestChartBackwardCompatible renders chart 0.37.0 and the working tree's
// with the same values, those of a 0.37.0 user: the scheduler config is the
// same text once the lease is named, and by default differs only in the
// lease's name, now the release's.
func TestChartBackwardCompatible(t *testing.T) {
	custom := valuesFile(t, `
schedulerName: packing-scheduler
plugins:
  multiPoint:
    enabled:
      - name: NodeLessPods
        weight: 5
  score:
    disabled:
      - name: NodeResourcesBalancedAllocation
pluginConfig:
  - name: NodeLessPods
    args:
      mode: MostPods
      ignoreDaemonSetPods: false
  - name: PodTopologySpread
    args:
      defaultingType: List
`)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"defaults with the lease named", []string{"--set", "leaderElection.resourceName=custom-scheduler"}},
		{"a 0.37.0 values file with the lease named", []string{"-f", custom, "--set", "leaderElection.resourceName=custom-scheduler"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			old := rendered{objs: renderRelease(t, chartRelease, previousChart, "adminsched-system", tt.args...)}
			if diff := cmp.Diff(old.configText(t), render(t, tt.args...).configText(t)); diff != "" {
				t.Errorf("the config differs from chart 0.37.0's (-0.37.0, +now):\n%s", diff)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		old := rendered{objs: renderRelease(t, chartRelease, previousChart, "adminsched-system")}
		oldText, newText := old.configText(t), render(t).configText(t)
		want := strings.Replace(oldText, `resourceName: "custom-scheduler"`, `resourceName: "adminsched-scheduler"`, 1)
		if diff := cmp.Diff(want, newText); diff != "" {
			t.Errorf("the default config differs from chart 0.37.0's by more than the lease's name (-0.37.0 with the new lease, +now):\n%s", diff)
		}
	})
}

// TestChartProfiles renders several profiles in one release: each has its
// schedulerName, plugins, args and percentageOfNodesToScore, and the
// single-profile values are ignored.
func TestChartProfiles(t *testing.T) {
	values := valuesFile(t, `
percentageOfNodesToScore: 40
profiles:
  - schedulerName: spread-scheduler
    plugins:
      multiPoint:
        enabled: [{name: NodeLessPods, weight: 3}]
    pluginConfig:
      - name: NodeLessPods
        args: {mode: LeastPods}
  - schedulerName: pack-scheduler
    percentageOfNodesToScore: 100
    plugins:
      score:
        enabled: [{name: NodeLessPods, weight: 5}]
        disabled: [{name: NodeResourcesBalancedAllocation}]
      reserve:
        enabled: [{name: NodeLessPods}]
      filter:
        enabled: [{name: MaintenanceWindow}]
    pluginConfig:
      - name: NodeLessPods
        args: {mode: MostPods}
      - name: MaintenanceWindow
        args: {avoidWithin: 2h}
  - schedulerName: plain-scheduler
`)
	cfg := render(t, "-f", values).config(t)
	if got := ptr.Deref(cfg.PercentageOfNodesToScore, -1); got != 40 {
		t.Errorf("percentageOfNodesToScore = %d, want 40", got)
	}
	var names []string
	for _, p := range cfg.Profiles {
		names = append(names, ptr.Deref(p.SchedulerName, ""))
	}
	if want := []string{"spread-scheduler", "pack-scheduler", "plain-scheduler"}; !slices.Equal(names, want) {
		t.Fatalf("profiles %q, want %q", names, want)
	}
	spread, pack, plain := cfg.Profiles[0], cfg.Profiles[1], cfg.Profiles[2]
	if spread.PercentageOfNodesToScore != nil || ptr.Deref(pack.PercentageOfNodesToScore, -1) != 100 {
		t.Errorf("percentageOfNodesToScore of the profiles: %v and %v, want unset and 100", spread.PercentageOfNodesToScore, pack.PercentageOfNodesToScore)
	}
	wantPack := &configv1.Plugins{
		Score: configv1.PluginSet{
			Enabled:  []configv1.Plugin{{Name: "NodeLessPods", Weight: ptr.To[int32](5)}},
			Disabled: []configv1.Plugin{{Name: "NodeResourcesBalancedAllocation"}},
		},
		Reserve: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "NodeLessPods"}}},
		Filter:  configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "MaintenanceWindow"}}},
	}
	if diff := cmp.Diff(wantPack, pack.Plugins); diff != "" {
		t.Errorf("pack-scheduler's plugins (-want, +got):\n%s", diff)
	}
	if got := spread.Plugins.MultiPoint.Enabled; len(got) != 1 || got[0].Name != "NodeLessPods" {
		t.Errorf("spread-scheduler's multiPoint: %v", got)
	}
	if plain.Plugins != nil || plain.PluginConfig != nil {
		t.Errorf("plain-scheduler has plugins %v and pluginConfig %v, want the defaults only", plain.Plugins, plain.PluginConfig)
	}
	wantArgs := map[string]map[string]any{
		"spread-scheduler": {"NodeLessPods": map[string]any{"mode": "LeastPods"}},
		"pack-scheduler":   {"NodeLessPods": map[string]any{"mode": "MostPods"}, "MaintenanceWindow": map[string]any{"avoidWithin": "2h"}},
		"plain-scheduler":  {},
	}
	if diff := cmp.Diff(wantArgs, profileArgs(t, cfg)); diff != "" {
		t.Errorf("the profiles' args (-want, +got):\n%s", diff)
	}
}

// TestChartLease checks the lease's name: the release's fullname unless
// leaderElection.resourceName is set, in the config and the Role alike.
func TestChartLease(t *testing.T) {
	for _, tt := range []struct {
		name, release string
		args          []string
		want, wantNS  string
	}{
		{"the release named like the chart", chartRelease, nil, "adminsched-scheduler", "adminsched-system"},
		{"another release", "team-a", nil, "team-a-adminsched-scheduler", "adminsched-system"},
		{"fullnameOverride", "team-a", []string{"--set", "fullnameOverride=sched"}, "sched", "adminsched-system"},
		{"set in values", "team-a", []string{"--set", "leaderElection.resourceName=my-lease", "--set", "leaderElection.resourceNamespace=leases"}, "my-lease", "leases"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := rendered{objs: renderRelease(t, tt.release, chartDir, "adminsched-system", tt.args...)}
			le := r.config(t).LeaderElection
			if le.ResourceName != tt.want || le.ResourceNamespace != tt.wantNS {
				t.Errorf("the config's lease is %s/%s, want %s/%s", le.ResourceNamespace, le.ResourceName, tt.wantNS, tt.want)
			}
			names, ns := r.leaseRole(t)
			if !slices.Equal(names, []string{tt.want}) || ns != tt.wantNS {
				t.Errorf("the lease Role grants %q in %s, want [%s] in %s", names, ns, tt.want, tt.wantNS)
			}
		})
	}
}

// restrictedViolations returns how spec breaks the restricted Pod Security
// Standard (https://kubernetes.io/docs/concepts/security/pod-security-standards/),
// checked field by field as its policy lists them, plus a writable root
// filesystem, which the scheduler does not need.
func restrictedViolations(spec *v1.PodSpec) []string {
	var out []string
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		out = append(out, "host namespaces")
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			out = append(out, "hostPath volume "+v.Name)
		}
	}
	pod := ptr.Deref(spec.SecurityContext, v1.PodSecurityContext{})
	for _, c := range spec.Containers {
		sc := ptr.Deref(c.SecurityContext, v1.SecurityContext{})
		if ptr.Deref(sc.Privileged, false) {
			out = append(out, c.Name+": privileged")
		}
		if ptr.Deref(sc.AllowPrivilegeEscalation, true) {
			out = append(out, c.Name+": allowPrivilegeEscalation not false")
		}
		if caps := ptr.Deref(sc.Capabilities, v1.Capabilities{}); !slices.Contains(caps.Drop, "ALL") {
			out = append(out, c.Name+": capabilities do not drop ALL")
		} else if len(caps.Add) > 0 && !slices.Equal(caps.Add, []v1.Capability{"NET_BIND_SERVICE"}) {
			out = append(out, c.Name+": capabilities add more than NET_BIND_SERVICE")
		}
		if !ptr.Deref(sc.RunAsNonRoot, ptr.Deref(pod.RunAsNonRoot, false)) {
			out = append(out, c.Name+": runAsNonRoot not true")
		}
		if ptr.Deref(sc.RunAsUser, ptr.Deref(pod.RunAsUser, -1)) == 0 {
			out = append(out, c.Name+": runAsUser 0")
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = pod.SeccompProfile
		}
		if seccomp == nil || (seccomp.Type != v1.SeccompProfileTypeRuntimeDefault && seccomp.Type != v1.SeccompProfileTypeLocalhost) {
			out = append(out, c.Name+": seccompProfile neither RuntimeDefault nor Localhost")
		}
		if !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
			out = append(out, c.Name+": root filesystem writable")
		}
	}
	return out
}

// TestChartPodSecurity checks the scheduler's pod against the restricted
// Pod Security Standard by default and with other users, that the
// securityContext values reach the pod, and that the check fails on a
// privileged container.
func TestChartPodSecurity(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		if v := restrictedViolations(&render(t).deployment(t).Spec.Template.Spec); len(v) > 0 {
			t.Errorf("the scheduler's pod breaks the restricted Pod Security Standard: %q", v)
		}
	})
	t.Run("other users", func(t *testing.T) {
		d := render(t, "--set", "podSecurityContext.runAsUser=1000", "--set", "securityContext.runAsUser=1000",
			"--set", "podSecurityContext.fsGroup=2000").deployment(t)
		if v := restrictedViolations(&d.Spec.Template.Spec); len(v) > 0 {
			t.Errorf("the scheduler's pod breaks the restricted Pod Security Standard: %q", v)
		}
		pod, c := d.Spec.Template.Spec.SecurityContext, d.Spec.Template.Spec.Containers[0].SecurityContext
		if ptr.Deref(pod.RunAsUser, 0) != 1000 || ptr.Deref(pod.FSGroup, 0) != 2000 || ptr.Deref(c.RunAsUser, 0) != 1000 {
			t.Errorf("podSecurityContext %+v, securityContext %+v: the values did not reach them", pod, c)
		}
	})
	t.Run("a privileged container is refused", func(t *testing.T) {
		d := render(t, "--set", "securityContext.privileged=true", "--set", "securityContext.allowPrivilegeEscalation=true").deployment(t)
		want := []string{"kube-scheduler: privileged", "kube-scheduler: allowPrivilegeEscalation not false"}
		if diff := cmp.Diff(want, restrictedViolations(&d.Spec.Template.Spec)); diff != "" {
			t.Errorf("violations of a privileged container (-want, +got):\n%s", diff)
		}
	})
}

// TestChartDeploymentValues checks the values that shape the Deployment:
// image.digest, extraArgs, topologySpreadConstraints, serviceAccount and
// config.existingConfigMap.
func TestChartDeploymentValues(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	container := func(d *appsv1.Deployment) v1.Container { return d.Spec.Template.Spec.Containers[0] }

	t.Run("image", func(t *testing.T) {
		if got := container(render(t).deployment(t)).Image; got != "adminsched/kube-scheduler:v0.37.0" {
			t.Errorf("default image %s, want adminsched/kube-scheduler:v0.37.0 (the appVersion)", got)
		}
		got := container(render(t, "--set", "image.repository=registry.example.com/ks", "--set", "image.tag=v9", "--set", "image.digest="+digest).deployment(t)).Image
		if want := "registry.example.com/ks@" + digest; got != want {
			t.Errorf("image with a digest %s, want %s (the digest overrides the tag)", got, want)
		}
	})
	t.Run("extraArgs", func(t *testing.T) {
		cmd := container(render(t, "--set-json", `extraArgs=["--kube-api-qps=100","--kube-api-burst=200"]`).deployment(t)).Command
		if n := len(cmd); n < 2 || !slices.Equal(cmd[n-2:], []string{"--kube-api-qps=100", "--kube-api-burst=200"}) {
			t.Errorf("command %q does not end with the extraArgs in order", cmd)
		}
		if !slices.Contains(cmd, "--config=/etc/kubernetes/custom-scheduler/scheduler-config.yaml") {
			t.Errorf("command %q lost --config", cmd)
		}
	})
	t.Run("topologySpreadConstraints", func(t *testing.T) {
		d := render(t, "--set-json", `topologySpreadConstraints=[`+
			`{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"},`+
			`{"maxSkew":2,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"team":"a"}}}]`).deployment(t)
		got := d.Spec.Template.Spec.TopologySpreadConstraints
		if len(got) != 2 {
			t.Fatalf("topologySpreadConstraints %+v, want 2", got)
		}
		if got[0].TopologyKey != "topology.kubernetes.io/zone" || got[0].LabelSelector == nil ||
			!cmp.Equal(got[0].LabelSelector.MatchLabels, d.Spec.Selector.MatchLabels) {
			t.Errorf("a constraint without labelSelector: %+v, want the Deployment's selector %v", got[0], d.Spec.Selector.MatchLabels)
		}
		if got[1].MaxSkew != 2 || got[1].LabelSelector == nil || !cmp.Equal(got[1].LabelSelector.MatchLabels, map[string]string{"team": "a"}) {
			t.Errorf("a constraint with labelSelector: %+v, want it as given", got[1])
		}
		if c := render(t).deployment(t).Spec.Template.Spec.TopologySpreadConstraints; c != nil {
			t.Errorf("default topologySpreadConstraints %+v, want none", c)
		}
	})
	t.Run("an existing ServiceAccount", func(t *testing.T) {
		r := render(t, "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=platform-scheduler")
		if sas := r.ofKind("ServiceAccount"); len(sas) != 0 {
			t.Errorf("serviceAccount.create=false rendered the ServiceAccount %s", sas[0].GetName())
		}
		if got := r.deployment(t).Spec.Template.Spec.ServiceAccountName; got != "platform-scheduler" {
			t.Errorf("the pods run as %q, want platform-scheduler", got)
		}
		for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
			for _, o := range r.ofKind(kind) {
				var b rbacv1.RoleBinding
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
					t.Fatal(err)
				}
				if len(b.Subjects) != 1 || b.Subjects[0].Name != "platform-scheduler" || b.Subjects[0].Namespace != "adminsched-system" {
					t.Errorf("%s %s binds %+v, want adminsched-system/platform-scheduler", kind, b.Name, b.Subjects)
				}
			}
		}
		if got := render(t, "--set", "serviceAccount.name=named").deployment(t).Spec.Template.Spec.ServiceAccountName; got != "named" {
			t.Errorf("serviceAccount.name=named with create: the pods run as %q", got)
		}
	})
	t.Run("an existing ConfigMap", func(t *testing.T) {
		r := render(t, "--set", "config.existingConfigMap=my-config")
		if cms := r.ofKind("ConfigMap"); len(cms) != 0 {
			t.Errorf("config.existingConfigMap rendered the ConfigMap %s", cms[0].GetName())
		}
		d := r.deployment(t)
		vols := d.Spec.Template.Spec.Volumes
		if len(vols) != 1 || vols[0].ConfigMap == nil || vols[0].ConfigMap.Name != "my-config" {
			t.Errorf("volumes %+v, want the ConfigMap my-config", vols)
		}
		if _, ok := d.Spec.Template.Annotations["checksum/config"]; ok {
			t.Errorf("a checksum/config annotation of a ConfigMap the chart does not render")
		}
	})
}

// TestChartRawConfig gives a whole KubeSchedulerConfiguration: the ConfigMap
// holds it verbatim and the lease Role follows its lease.
func TestChartRawConfig(t *testing.T) {
	const raw = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
# kept as written
leaderElection:
  leaderElect: true
  resourceName: raw-lease
  resourceNamespace: adminsched-system
profiles:
  - schedulerName: raw-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: PlacementPolicy
`
	values := valuesFile(t, "config:\n  raw: |\n"+indent(raw, "    "))
	r := render(t, "-f", values)
	if got := r.configText(t); got != raw {
		t.Errorf("the ConfigMap's scheduler-config.yaml is not config.raw verbatim (-raw, +got):\n%s", cmp.Diff(raw, got))
	}
	if names, ns := r.leaseRole(t); !slices.Equal(names, []string{"raw-lease"}) || ns != "adminsched-system" {
		t.Errorf("the lease Role grants %q in %s, want raw-lease in adminsched-system", names, ns)
	}
	if cfg := r.config(t); len(cfg.Profiles) != 1 || ptr.Deref(cfg.Profiles[0].SchedulerName, "") != "raw-scheduler" {
		t.Errorf("profiles %+v, want raw-scheduler's", cfg.Profiles)
	}
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// TestChartRBACCreate renders every optional part with rbac.create=false:
// no RBAC object at all, and the ServiceAccounts still.
func TestChartRBACCreate(t *testing.T) {
	all := []string{"--set", "serviceMonitor.enabled=true", "--set", "licenseDriver.enabled=true"}
	count := func(r rendered) (rbac, sas int) {
		for _, o := range r.objs {
			if strings.HasPrefix(o.GetAPIVersion(), rbacv1.GroupName+"/") {
				rbac++
			}
		}
		return rbac, len(r.ofKind("ServiceAccount"))
	}
	if rbac, _ := count(render(t, all...)); rbac == 0 {
		t.Fatalf("with rbac.create=true the chart rendered no RBAC object")
	}
	rbac, sas := count(render(t, append(all, "--set", "rbac.create=false")...))
	if rbac != 0 {
		t.Errorf("rbac.create=false rendered %d RBAC objects", rbac)
	}
	if sas != 3 {
		t.Errorf("rbac.create=false rendered %d ServiceAccounts, want the scheduler's and the license driver's 2", sas)
	}
}

// TestChartBadNewValues checks that bad values of profiles, lease, image,
// extraArgs, config, serviceAccount and rbac fail helm template naming the
// value.
func TestChartBadNewValues(t *testing.T) {
	checkBadValues(t, []badValues{
		{"a profile without schedulerName", []string{"--set-json", `profiles=[{"plugins":{}}]`},
			[]string{"/profiles/0", "schedulerName"}},
		{"an unknown key in a profile", []string{"--set-json", `profiles=[{"schedulerName":"a","plugin":{}}]`},
			[]string{"/profiles/0", "plugin"}},
		{"a profile named default-scheduler", []string{"--set-json", `profiles=[{"schedulerName":"a"},{"schedulerName":"default-scheduler"}]`},
			[]string{`profiles[1].schedulerName: "default-scheduler" is the default scheduler's name`}},
		{"a bad arg in the second profile", []string{"--set-json", `profiles=[{"schedulerName":"a"},{"schedulerName":"b","pluginConfig":[{"name":"NodeLessPods","args":{"mode":"Fewest"}}]}]`},
			[]string{"/profiles/1/pluginConfig/0/args/mode"}},
		{"an unknown plugin in a profile", []string{"--set-json", `profiles=[{"schedulerName":"a","plugins":{"score":{"enabled":[{"name":"NodeLesPods"}]}}}]`},
			[]string{"/profiles/0/plugins/score/enabled/0/name"}},
		{"two profiles with one schedulerName", []string{"--set-json", `profiles=[{"schedulerName":"a"},{"schedulerName":"a"}]`},
			[]string{"profiles[1].schedulerName", `"a"`, "profiles[0]"}},
		{"percentageOfNodesToScore above 100", []string{"--set", "percentageOfNodesToScore=101"},
			[]string{"/percentageOfNodesToScore"}},
		{"a profile's percentageOfNodesToScore below 0", []string{"--set-json", `profiles=[{"schedulerName":"a","percentageOfNodesToScore":-1}]`},
			[]string{"/profiles/0/percentageOfNodesToScore"}},
		{"a fullname that makes the default scheduler's lease", []string{"--set", "fullnameOverride=kube-scheduler"},
			[]string{"leaderElection.resourceName", "kube-scheduler"}},
		// Refused by a template, not the schema, whose `not` said only
		// "'not' failed": the message names the value and what to set.
		{"schedulerName default-scheduler", []string{"--set", "schedulerName=default-scheduler"},
			[]string{`schedulerName: "default-scheduler" is the default scheduler's name`, "name the profile otherwise"}},
		{"the lease kube-scheduler", []string{"--set", "leaderElection.resourceName=kube-scheduler"},
			[]string{`leaderElection.resourceName: "kube-scheduler" is the default scheduler's lease`, "set another name"}},
		{"the lease kube-scheduler without leader election", []string{"--set", "leaderElection.resourceName=kube-scheduler", "--set", "leaderElection.leaderElect=false", "--set", "replicas=1"},
			[]string{`leaderElection.resourceName: "kube-scheduler" is the default scheduler's lease`}},
		{"a raw config's lease kube-scheduler", []string{"--set-json", `config.raw="apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  resourceName: kube-scheduler\n  resourceNamespace: kube-system\n"`},
			[]string{`config.raw: leaderElection.resourceName "kube-scheduler" is the default scheduler's lease`}},
		{"a digest that is not sha256", []string{"--set", "image.digest=latest"},
			[]string{"/image/digest"}},
		{"an extra arg that is not a flag", []string{"--set-json", `extraArgs=["v=4"]`},
			[]string{"/extraArgs/0"}},
		{"an extra --config", []string{"--set-json", `extraArgs=["--config=/tmp/c.yaml"]`},
			[]string{"extraArgs", "--config", "config.raw"}},
		{"both config sources", []string{"--set", "config.existingConfigMap=c", "--set", "config.raw=x"},
			[]string{"config", "raw", "existingConfigMap"}},
		{"an unknown config key", []string{"--set", "config.file=x"},
			[]string{"/config", "file"}},
		{"a raw config that is not YAML", []string{"--set", "config.raw=a: [b"},
			[]string{"config.raw", "YAML"}},
		{"a raw config of another kind", []string{"--set", "config.raw=kind: Pod"},
			[]string{"config.raw", "KubeSchedulerConfiguration"}},
		{"a raw config without a lease", []string{"--set-json", `config.raw="apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"`},
			[]string{"config.raw", "leaderElection.resourceName", "kube-scheduler"}},
		{"no ServiceAccount to run as", []string{"--set", "serviceAccount.create=false"},
			[]string{"serviceAccount.name", "serviceAccount.create"}},
		{"an unknown rbac key", []string{"--set", "rbac.enabled=false"},
			[]string{"/rbac", "enabled"}},
		{"rbac.create as a string", []string{"--set-string", "rbac.create=no"},
			[]string{"/rbac/create"}},
		{"a maintenance controller's plannedAhead that is no duration", []string{"--set", "maintenanceController.enabled=true", "--set", "maintenanceController.plannedAhead=tomorrow"},
			[]string{"/maintenanceController/plannedAhead"}},
		{"two maintenance controllers without leader election", []string{"--set", "maintenanceController.enabled=true", "--set", "maintenanceController.leaderElection.enabled=false"},
			[]string{"maintenanceController.replicas", "maintenanceController.leaderElection.enabled=true"}},
		{"a maintenance controller arg that is not a flag", []string{"--set-json", `maintenanceController.args=["profile=x"]`},
			[]string{"/maintenanceController/args/0"}},
		{"two NodePoolQuota controllers without leader election", []string{"--set", "nodePoolQuota.controller.enabled=true", "--set", "nodePoolQuota.controller.leaderElection.enabled=false"},
			[]string{"nodePoolQuota.controller.replicas", "nodePoolQuota.controller.leaderElection.enabled=true"}},
		{"a NodePoolQuota controller arg that is not a flag", []string{"--set-json", `nodePoolQuota.controller.args=["v=4"]`},
			[]string{"/nodePoolQuota/controller/args/0"}},
		{"an unknown NodePoolQuota key", []string{"--set", "nodePoolQuota.enabled=true"},
			[]string{"/nodePoolQuota", "enabled"}},
		{"NodePoolQuota with args, which it has none of", []string{"--set-json", `pluginConfig=[{"name":"NodePoolQuota","args":{"limits":{}}}]`},
			[]string{"/pluginConfig/0/args"}},
		{"a topology spread constraint without topologyKey", []string{"--set-json", `topologySpreadConstraints=[{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule"}]`},
			[]string{"/topologySpreadConstraints/0", "topologyKey"}},
	})
}

// TestChartREADMEValues holds the chart README's values tables and
// values.yaml together: every value is documented (itself or a parent, as
// `resources` documents its requests and limits), and every documented
// value exists.
func TestChartREADMEValues(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	var leaves []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			path := prefix + k
			all[path] = true
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(path+".", sub)
				continue
			}
			leaves = append(leaves, path)
		}
	}
	walk("", values)

	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := readmeValues(string(readme))
	slices.Sort(leaves)
	for _, leaf := range leaves {
		var found bool
		for p := leaf; p != "" && !found; {
			found = documented[p]
			i := strings.LastIndex(p, ".")
			if i < 0 {
				break
			}
			p = p[:i]
		}
		if !found {
			t.Errorf("README.md documents neither %s nor a parent of it", leaf)
		}
	}
	for name := range documented {
		if !all[name] {
			t.Errorf("README.md documents %s, which values.yaml does not have", name)
		}
	}
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	// braces is a name's last part written as {a,b}.
	braces = regexp.MustCompile(`^(.*)\{([^}]*)\}$`)
)

// readmeValues returns the value names in the first column of the
// README's tables: `a.b`, `a.{b,c}`, and `.c` after `a.b` for `a.c`.
func readmeValues(readme string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		parent := ""
		for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
			name := m[1]
			if strings.HasPrefix(name, ".") {
				name = parent + name
			} else if i := strings.LastIndex(strings.Split(name, "{")[0], "."); i >= 0 {
				parent = name[:i]
			} else {
				parent = ""
			}
			if b := braces.FindStringSubmatch(name); b != nil {
				for _, part := range strings.Split(b[2], ",") {
					names[b[1]+part] = true
				}
				continue
			}
			names[name] = true
		}
	}
	return names
}
