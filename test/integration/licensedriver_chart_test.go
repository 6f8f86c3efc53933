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
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
)

// TestChartLicenseDriver checks the chart's licenseDriver section:
//   - off by default: no object of the driver is rendered;
//   - on, helm lint --strict passes, and it renders what
//     manifests/license-driver does: each role is granted the same
//     permissions, the containers are the same but for their image, the
//     host volumes are the same, the configs (the controller's and the
//     kubelet plugin's) are the same;
//   - with serviceMonitor on, a ServiceMonitor scrapes the controllers'
//     secure port over https with its token;
//   - applied to the API server (but the ServiceMonitors: envtest serves
//     no monitoring.coreos.com), the driver runs as in
//     TestLicenseDriverInstall, with the chart ServiceAccounts' tokens,
//     and the chart's metrics reader binding
//     (serviceMonitor.metricsReaderSubjects) lets scrape /metrics.
func TestChartLicenseDriver(t *testing.T) {
	for _, o := range renderChart(t, "adminsched-system") {
		if strings.Contains(o.GetName(), "license-driver") || o.GetKind() == "DaemonSet" {
			t.Errorf("the chart's defaults render %s %s: licenseDriver is off by default", o.GetKind(), o.GetName())
		}
	}
	enabled := []string{"--set", "licenseDriver.enabled=true"}
	if out, err := runHelm(t, append([]string{"lint", "--strict", chartDir}, enabled...)...); err != nil {
		t.Errorf("helm lint --strict %v: %v\n%s", enabled, err, out)
	}

	tc := newTestContext(t)
	var objs []*unstructured.Unstructured
	var monitors []*unstructured.Unstructured
	for _, o := range renderChart(t, tc.ns, append(enabled, "--set", "serviceMonitor.enabled=true",
		"--set-json", fmt.Sprintf(`serviceMonitor.metricsReaderSubjects=[{"kind":"ServiceAccount","name":"prometheus","namespace":%q}]`, tc.ns))...) {
		if o.GetKind() == "ServiceMonitor" {
			monitors = append(monitors, o)
			continue
		}
		objs = append(objs, o)
	}
	chart := readDriverObjects(t, "the chart", objs)
	checkDriverServiceMonitor(t, chart, monitors)
	kust := readDriverObjects(t, "manifests/license-driver", kustomize(t, licenseDriverDir))
	if chart.namespace != tc.ns {
		t.Errorf("the chart's license driver is in %q, want the release namespace %q", chart.namespace, tc.ns)
	}
	for _, role := range []struct{ chart, kust driverPod }{{chart.controller, kust.controller}, {chart.plugin, kust.plugin}} {
		got := grantsOf(t, chart.objs, chart.namespace, role.chart.serviceAccount, map[string]string{chart.namespace: "<namespace>"})
		want := grantsOf(t, kust.objs, kust.namespace, role.kust.serviceAccount, map[string]string{kust.namespace: "<namespace>"})
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(scopedPermission{}, permission{})); diff != "" {
			t.Errorf("%s %s's ServiceAccount is granted other permissions than in manifests/license-driver (-kustomization +chart):\n%s", role.chart.kind, role.chart.name, diff)
		}
		// The image is the chart's values'; the rest must be the same.
		wantC, gotC := role.kust.container.DeepCopy(), role.chart.container.DeepCopy()
		wantC.Image, gotC.Image, gotC.ImagePullPolicy = "", "", ""
		if diff := cmp.Diff(wantC, gotC); diff != "" {
			t.Errorf("%s %s's container differs from manifests/license-driver's (-kustomization +chart):\n%s", role.chart.kind, role.chart.name, diff)
		}
		if diff := cmp.Diff(hostVolumes(role.kust.volumes), hostVolumes(role.chart.volumes)); diff != "" {
			t.Errorf("%s %s's host volumes differ from manifests/license-driver's (-kustomization +chart):\n%s", role.chart.kind, role.chart.name, diff)
		}
	}
	// The admission policies: the same validations (their match on the
	// ServiceAccount's name differs: the chart knows its namespace).
	if diff := cmp.Diff(policyValidations(t, kust.objs), policyValidations(t, chart.objs)); diff != "" {
		t.Errorf("the chart's ValidatingAdmissionPolicy differs from manifests/license-driver's (-kustomization +chart):\n%s", diff)
	}
	for _, c := range []struct {
		role        string
		kust, chart *driverConfig
		load        func(string) (*config.Configuration, error)
	}{{"controller", kust.controller.config, chart.controller.config, config.Load}, {"kubelet plugin", kust.plugin.config, chart.plugin.config, config.LoadNode}} {
		_, kustConfig := tc.loadDriverConfig(kust, c.kust, c.load)
		_, chartConfig := tc.loadDriverConfig(chart, c.chart, c.load)
		if diff := cmp.Diff(kustConfig, chartConfig); diff != "" {
			t.Errorf("the %s's configuration from the chart's default licenseDriver.config differs from manifests/license-driver's ConfigMap (-kustomization +chart):\n%s", c.role, diff)
		}
	}

	tc.checkDriverInstall(chart)
}

// checkDriverServiceMonitor checks that one of monitors scrapes the
// controllers: it selects the Service whose port https is the controller
// pods' port of --secure-port, over https, with the scraper's token.
func checkDriverServiceMonitor(t testing.TB, in *driverInstall, monitors []*unstructured.Unstructured) {
	t.Helper()
	var services []v1.Service
	for _, o := range in.objs {
		if o.GetKind() == "Service" {
			var s v1.Service
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err != nil {
				t.Fatal(err)
			}
			services = append(services, s)
		}
	}
	securePort := containerFlags(in.controller.container)["--secure-port"]
	for _, m := range monitors {
		selector, _, _ := unstructured.NestedStringMap(m.Object, "spec", "selector", "matchLabels")
		endpoints, _, _ := unstructured.NestedSlice(m.Object, "spec", "endpoints")
		for _, s := range services {
			if len(selector) == 0 || !labels.SelectorFromSet(selector).Matches(labels.Set(s.Labels)) ||
				!labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(in.controller.template.Labels)) {
				continue
			}
			for _, e := range endpoints {
				ep, _ := e.(map[string]any)
				for _, p := range s.Spec.Ports {
					if ep["port"] == p.Name && ep["scheme"] == "https" && ep["path"] == "/metrics" && ep["bearerTokenFile"] != nil &&
						containerPort(in.controller.container, p.TargetPort.String()) == securePort {
						return
					}
				}
			}
		}
	}
	t.Errorf("%s: no ServiceMonitor scrapes https /metrics on the controller's --secure-port %s through a Service (monitors: %d)", in.source, securePort, len(monitors))
}

// policyValidations returns the spec of the one ValidatingAdmissionPolicy
// in objs, without its matchConditions, and checks that a binding denies
// with it.
func policyValidations(t *testing.T, objs []*unstructured.Unstructured) *admissionregistrationv1.ValidatingAdmissionPolicySpec {
	t.Helper()
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	var bound bool
	for _, o := range objs {
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy":
			policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, policy); err != nil {
				t.Fatal(err)
			}
		case "ValidatingAdmissionPolicyBinding":
			var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			bound = bound || slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny)
		}
	}
	if policy == nil || !bound {
		t.Errorf("no ValidatingAdmissionPolicy (%v) or no binding that denies (%v)", policy != nil, bound)
		return nil
	}
	spec := policy.Spec.DeepCopy()
	if len(spec.MatchConditions) != 1 {
		t.Errorf("the policy %s has %d matchConditions, want 1 (the controller's ServiceAccount)", policy.Name, len(spec.MatchConditions))
	}
	spec.MatchConditions = nil
	return spec
}

// hostVolumes returns the hostPath volumes by name.
func hostVolumes(volumes []v1.Volume) map[string]v1.HostPathVolumeSource {
	out := map[string]v1.HostPathVolumeSource{}
	for _, v := range volumes {
		if v.HostPath != nil {
			out[v.Name] = *v.HostPath
		}
	}
	return out
}

// TestChartLicenseDriverValues renders the chart with licenseDriver values:
// bad ones fail at helm template with the field named (values.schema.json);
// a license source with a password reaches the controller's configuration
// and not the kubelet plugin's, which keeps the features; a configured
// DeviceClass name outside .licenses.adminsched.io is listed in the
// admission policy's classNames; a kubelet directory of its own moves the
// DaemonSet's flags and mounts together.
func TestChartLicenseDriverValues(t *testing.T) {
	on := []string{"--set", "licenseDriver.enabled=true"}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"no feature", []string{"--set-json", `licenseDriver.config.features=[]`},
			[]string{"/licenseDriver/config/features"}},
		{"a feature without a name", []string{"--set-json", `licenseDriver.config.features=[{"seats":3}]`},
			[]string{"/licenseDriver/config/features/0", "name"}},
		{"a misspelt feature field", []string{"--set-json", `licenseDriver.config.features=[{"name":"MATLAB","seat":3}]`},
			[]string{"/licenseDriver/config/features/0", "seat"}},
		{"negative seats", []string{"--set-json", `licenseDriver.config.features=[{"name":"MATLAB","seats":-1}]`},
			[]string{"/licenseDriver/config/features/0/seats"}},
		{"two sources", []string{"--set-json", `licenseDriver.config.source={"static":{},"http":{"url":"http://licsrv/f"}}`},
			[]string{"/licenseDriver/config/source"}},
		{"an http source without a URL", []string{"--set-json", `licenseDriver.config.source={"http":{}}`},
			[]string{"/licenseDriver/config/source/http", "url"}},
		{"an unknown onStale", []string{"--set", "licenseDriver.config.onStale=Open"},
			[]string{"/licenseDriver/config/onStale", "FailClosed"}},
		{"a poll interval without a unit", []string{"--set", "licenseDriver.config.pollInterval=30"},
			[]string{"/licenseDriver/config/pollInterval"}},
		{"no controller", []string{"--set", "licenseDriver.controller.replicas=0"},
			[]string{"/licenseDriver/controller/replicas"}},
		{"a relative kubelet directory", []string{"--set", "licenseDriver.kubeletPlugin.kubeletDir=var/lib/kubelet"},
			[]string{"/licenseDriver/kubeletPlugin/kubeletDir"}},
		{"an unknown licenseDriver value", []string{"--set", "licenseDriver.enable=true"},
			[]string{"/licenseDriver", "enable"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{}, on...), tt.args...)
			out, err := helmTemplate(t, "adminsched-system", args...)
			if err == nil {
				t.Fatalf("helm template %v rendered:\n%s", args, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("helm template %v failed without naming %q: %v", args, w, err)
				}
			}
		})
	}

	t.Run("a license server with a password", func(t *testing.T) {
		const url = "https://reader:s3cret@licstat.example.com/features.json"
		in := readDriverObjects(t, "the chart", renderChart(t, "adminsched-system", append(on,
			"--set-json", `licenseDriver.config.source={"static":null,"http":{"url":"`+url+`"}}`,
			"--set-json", `licenseDriver.config.features=[{"name":"MATLAB","env":{"LM_LICENSE_FILE":"27000@licsrv"}},{"name":"Ansys_CFD","pool":"ansys"}]`)...))
		if !strings.Contains(in.controller.config.data, url) {
			t.Errorf("the controller's configuration lacks the source's URL:\n%s", in.controller.config.data)
		}
		plugin, err := config.DecodeNode([]byte(in.plugin.config.data))
		if err != nil {
			t.Fatalf("the kubelet plugin's configuration does not load: %v\n%s", err, in.plugin.config.data)
		}
		if strings.Contains(in.plugin.config.data, "s3cret") || strings.Contains(in.plugin.config.data, "licstat") || plugin.Source != (config.Source{}) {
			t.Errorf("the kubelet plugin's configuration holds the license source:\n%s", in.plugin.config.data)
		}
		var got []string
		for _, f := range plugin.Features {
			got = append(got, fmt.Sprintf("%s %s %v", f.Name, f.Pool, f.Env))
		}
		if diff := cmp.Diff([]string{"MATLAB matlab map[LM_LICENSE_FILE:27000@licsrv]", "Ansys_CFD ansys map[]"}, got); diff != "" {
			t.Errorf("the kubelet plugin's features (-want +got):\n%s", diff)
		}
	})

	t.Run("a DeviceClass name of its own", func(t *testing.T) {
		objs := renderChart(t, "adminsched-system", append(on, "--set-json",
			`licenseDriver.config.features=[{"name":"MATLAB","seats":3,"deviceClassName":"matlab-seats"},{"name":"Other","seats":1,"deviceClassName":"other.licenses.adminsched.io"}]`)...)
		spec := policyValidations(t, objs)
		var names string
		for _, v := range spec.Variables {
			if v.Name == "classNames" {
				names = v.Expression
			}
		}
		if names != `["matlab-seats"]` {
			t.Errorf("the admission policy's classNames: %q, want the configured name that does not end with .licenses.adminsched.io", names)
		}
	})

	t.Run("a kubelet directory of its own", func(t *testing.T) {
		const dir = "/var/snap/microk8s/common/var/lib/kubelet"
		in := readDriverObjects(t, "the chart", renderChart(t, "adminsched-system", append(on, "--set", "licenseDriver.kubeletPlugin.kubeletDir="+dir+"/")...))
		var flags []string
		for _, a := range in.plugin.container.Command {
			if strings.HasPrefix(a, "--plugin-data-dir=") || strings.HasPrefix(a, "--registrar-dir=") {
				flags = append(flags, a)
			}
		}
		want := []string{"--plugin-data-dir=" + dir + "/plugins/licenses.adminsched.io", "--registrar-dir=" + dir + "/plugins_registry"}
		if diff := cmp.Diff(want, flags); diff != "" {
			t.Errorf("the DaemonSet's directory flags (-want +got):\n%s", diff)
		}
		var mounts []string
		for _, m := range in.plugin.container.VolumeMounts {
			mounts = append(mounts, m.MountPath)
		}
		var paths []string
		for _, v := range hostVolumes(in.plugin.volumes) {
			paths = append(paths, v.Path)
		}
		for _, p := range []string{dir + "/plugins/licenses.adminsched.io", dir + "/plugins_registry"} {
			if !slices.Contains(mounts, p) || !slices.Contains(paths, p) {
				t.Errorf("the DaemonSet does not mount the host's %s at the same path (mounts %q, host paths %q)", p, mounts, paths)
			}
		}
	})
}

// TestChartLicenseDriverSchemaFields holds the fields values.schema.json
// allows in licenseDriver.config equal to the driver's configuration API
// (the json names of config.Configuration and the types it holds), so that
// a field added to the driver is not refused by the chart, and a field the
// driver does not know is refused before it reaches the cluster.
func TestChartLicenseDriverSchemaFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Definitions map[string]schemaNode `json:"definitions"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	root, ok := schema.Definitions["licenseDriverConfig"]
	if !ok {
		t.Fatal("values.schema.json has no definitions.licenseDriverConfig")
	}
	keys := func(n schemaNode) []string {
		var out []string
		for k := range n.Properties {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		path string
		node schemaNode
		typ  reflect.Type
	}{
		{"config", root, reflect.TypeFor[config.Configuration]()},
		{"config.features[]", ptr.Deref(root.Properties["features"].Items, schemaNode{}), reflect.TypeFor[config.Feature]()},
		{"config.source", root.Properties["source"], reflect.TypeFor[config.Source]()},
		{"config.source.static", root.Properties["source"].Properties["static"], reflect.TypeFor[config.StaticSource]()},
		{"config.source.lmstat", root.Properties["source"].Properties["lmstat"], reflect.TypeFor[config.LMStatSource]()},
		{"config.source.http", root.Properties["source"].Properties["http"], reflect.TypeFor[config.HTTPSource]()},
	} {
		if diff := cmp.Diff(jsonFields(tt.typ), keys(tt.node)); diff != "" {
			t.Errorf("values.schema.json licenseDriver.%s: properties differ from the json fields of %s (-driver +schema):\n%s", tt.path, tt.typ, diff)
		}
	}
}

// schemaNode is the part of a JSON schema the field check reads.
type schemaNode struct {
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
}

// jsonFields returns the json names of typ's fields, sorted; inline
// (embedded) fields such as TypeMeta are left out: the chart sets
// apiVersion and kind itself.
func jsonFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || strings.Contains(opts, "inline") || name == "-" || name == "" {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
