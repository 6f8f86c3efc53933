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

package playground

import (
	"testing"

	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
)

// TestNeedsNodePoolQuotaCRD: the CRD goes in before the scheduler when a
// profile runs NodePoolQuota, however it is enabled, or when the scenario
// holds quotas (the control run of a comparison applies them too); not
// otherwise.
func TestNeedsNodePoolQuotaCRD(t *testing.T) {
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
	const quota = "\n  - apiVersion: scheduling.adminsched.io/v1alpha1\n    kind: NodePoolQuota\n    metadata: {name: gpu}\n    spec: {teams: [{name: a, namespaces: [a], limits: {pods: '1'}}]}"
	tests := []struct {
		name, profiles, objects string
		want                    bool
	}{
		{name: "default plugins", profiles: "- schedulerName: a\n"},
		{name: "multiPoint", profiles: "- schedulerName: a\n- schedulerName: b\n  plugins: {multiPoint: {enabled: [{name: NodePoolQuota}]}}\n", want: true},
		{name: "filter", profiles: "- schedulerName: a\n  plugins: {preFilter: {enabled: [{name: NodePoolQuota}]}, filter: {enabled: [{name: NodePoolQuota}]}}\n", want: true},
		{name: "filter alone", profiles: "- schedulerName: a\n  plugins: {filter: {enabled: [{name: NodePoolQuota}]}}\n", want: true},
		{name: "disabled at filter and preFilter", profiles: "- schedulerName: a\n  plugins: {multiPoint: {enabled: [{name: NodePoolQuota}]}, preFilter: {disabled: [{name: NodePoolQuota}]}, filter: {disabled: [{name: '*'}]}}\n"},
		{name: "quotas without the plugin", profiles: "- schedulerName: a\n", objects: quota, want: true},
		{name: "other objects", profiles: "- schedulerName: a\n", objects: "\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := schedconfig.Prepare(klog.Background(), "c.yaml", []byte(head+tc.profiles), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			data := "nodes: [{name: node}]"
			if tc.objects != "" {
				data += "\nobjects:" + tc.objects
			}
			f, err := scenario.Decode("s.yaml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			plan, err := f.Plan(sc.Profiles)
			if err != nil {
				t.Fatal(err)
			}
			if got := needsNodePoolQuotaCRD(sc, plan); got != tc.want {
				t.Errorf("needsNodePoolQuotaCRD = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNodePoolQuotaCRDBuiltIn: the embedded bytes are the CRD of the kind
// the plugin watches.
func TestNodePoolQuotaCRDBuiltIn(t *testing.T) {
	var crd struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(schedulerplugins.NodePoolQuotaCRD, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Kind != "CustomResourceDefinition" || crd.Metadata.Name != "nodepoolquotas."+nodePoolQuotaKind.Group {
		t.Errorf("built-in CRD is %s %s", crd.Kind, crd.Metadata.Name)
	}
}
