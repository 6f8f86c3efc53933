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
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const (
	deschedulerDir = "../../manifests/descheduler"
	// deschedulerChartFiles holds the chart's copies of the policies.
	deschedulerChartFiles = chartDir + "/files/descheduler"
	// schedulerConfigMount is where the install mounts the scheduler's
	// ConfigMap in the descheduler's pod.
	schedulerConfigMount = "/etc/kubernetes/custom-scheduler"
	// deschedulerTestLabel marks the pods a test's descheduler may evict:
	// its policy's DefaultEvictor selects them only.
	deschedulerTestLabel = "descheduler-test"
)

// shippedPolicies are the policies of manifests/descheduler by the name
// descheduler.policy gives them.
var shippedPolicies = []string{"spread", "consolidate", "maintenance"}

// readPolicy returns the text of manifests/descheduler/<name>-policy.yaml.
func readPolicy(t testing.TB, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+"-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// deschedulerInstall is what a rendering (kustomize or the chart) holds of
// the descheduler.
type deschedulerInstall struct {
	deployment *appsv1.Deployment
	// rbac: the ServiceAccount, roles and bindings.
	rbac []*unstructured.Unstructured
	// policies: the ConfigMaps' data by ConfigMap name.
	configMaps map[string]map[string]string
}

// deschedulerObjects picks the descheduler's objects of objs (their names
// hold "descheduler"); it fails the test without a Deployment.
func deschedulerObjects(t testing.TB, objs []*unstructured.Unstructured) *deschedulerInstall {
	t.Helper()
	in := &deschedulerInstall{configMaps: map[string]map[string]string{}}
	for _, o := range objs {
		if !strings.Contains(o.GetName(), "descheduler") {
			continue
		}
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			in.rbac = append(in.rbac, o)
		case "Deployment":
			in.deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, in.deployment); err != nil {
				t.Fatal(err)
			}
		case "ConfigMap":
			var cm v1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
				t.Fatal(err)
			}
			in.configMaps[cm.Name] = cm.Data
		}
	}
	if in.deployment == nil {
		t.Fatal("no Deployment of the descheduler")
	}
	return in
}

// volume returns the ConfigMap name the Deployment mounts at dir.
func (in *deschedulerInstall) volume(t testing.TB, dir string) string {
	t.Helper()
	spec := in.deployment.Spec.Template.Spec
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				return v.ConfigMap.Name
			}
		}
	}
	t.Fatalf("the descheduler's Deployment mounts no ConfigMap at %s", dir)
	return ""
}

// policy returns the text of the policy the Deployment runs: the file
// --policy-config-file names, in the ConfigMap mounted there.
func (in *deschedulerInstall) policy(t testing.TB) string {
	t.Helper()
	path := in.flag(t, "--policy-config-file")
	data, ok := in.configMaps[in.volume(t, filepath.Dir(path))][filepath.Base(path)]
	if !ok {
		t.Fatalf("no ConfigMap of the rendering holds %s", path)
	}
	return data
}

// flag returns the value of the container's flag name (--name=value).
func (in *deschedulerInstall) flag(t testing.TB, name string) string {
	t.Helper()
	c := in.deployment.Spec.Template.Spec.Containers[0]
	for _, a := range append(c.Command, c.Args...) {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	t.Fatalf("the descheduler's command %v has no %s", c.Command, name)
	return ""
}

// policyProfiles decodes a DeschedulerPolicy's profiles.
func policyProfiles(t testing.TB, text string) (map[string]any, []any) {
	t.Helper()
	var policy map[string]any
	if err := yaml.Unmarshal([]byte(text), &policy); err != nil {
		t.Fatalf("decoding the policy: %v", err)
	}
	profiles, _, _ := unstructured.NestedSlice(policy, "profiles")
	if len(profiles) == 0 {
		t.Fatalf("the policy has no profile:\n%s", text)
	}
	return policy, profiles
}

// pluginArgs returns the args of plugin in profile's pluginConfig, adding
// an entry when there is none.
func pluginArgs(profile map[string]any, plugin string) map[string]any {
	configs, _, _ := unstructured.NestedSlice(profile, "pluginConfig")
	for _, c := range configs {
		if c := c.(map[string]any); c["name"] == plugin {
			args, _ := c["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				c["args"] = args
			}
			profile["pluginConfig"] = configs
			return args
		}
	}
	args := map[string]any{}
	profile["pluginConfig"] = append(configs, map[string]any{"name": plugin, "args": args})
	return args
}

// forTest rewrites a shipped policy for a run in the shared test cluster:
// PolicyEvictor reads schedulerConfig, and DefaultEvictor lets only the
// pods labelled for namespace ns go, so that other tests' pods are safe.
func forTest(t testing.TB, text, schedulerConfig, ns string) string {
	t.Helper()
	policy, profiles := policyProfiles(t, text)
	for _, p := range profiles {
		p := p.(map[string]any)
		pluginArgs(p, "PolicyEvictor")["schedulerConfig"] = schedulerConfig
		pluginArgs(p, "DefaultEvictor")["labelSelector"] = map[string]any{
			"matchLabels": map[string]any{deschedulerTestLabel: ns},
		}
	}
	policy["profiles"] = profiles
	data, err := yaml.Marshal(policy)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// deschedulerBinary returns bin/descheduler (or DESCHEDULER_BINARY). A
// release tree of an older minor has no descheduler module
// (hack/release-minor.sh drops it), hence no binary to run.
func deschedulerBinary(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("../../descheduler/go.mod"); os.IsNotExist(err) {
		t.Skip("this tree has no descheduler module: the descheduler is built for the newest minor only (hack/release-minor.sh)")
	}
	return toolBinary(t, "DESCHEDULER_BINARY", "descheduler", "this test runs the descheduler")
}
