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

package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
)

// installConfigMap holds the scheduler config that manifests/install deploys.
const installConfigMap = "../../manifests/install/configmap.yaml"

// decodeSchedulerConfig decodes, defaults and converts a v1 scheduler config
// the way kube-scheduler does with --config (our args are registered by the
// blank import of apis/config/scheme through pkg/plugins).
func decodeSchedulerConfig(t *testing.T, data []byte) *schedconfig.KubeSchedulerConfiguration {
	t.Helper()
	obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded %T, want KubeSchedulerConfiguration", obj)
	}
	return cfg
}

// TestInstallConfigMatchesExample keeps the ConfigMap that manifests/install
// deploys equal to manifests/nodelesspods/scheduler-config.yaml, after
// defaulting, except for the lease's namespace: the install runs in its own
// namespace, where its Role grants the lease.
func TestInstallConfigMatchesExample(t *testing.T) {
	example, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(installConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	var cm v1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatalf("%s: %v", installConfigMap, err)
	}
	installed, ok := cm.Data["scheduler-config.yaml"]
	if !ok {
		t.Fatalf("%s has no scheduler-config.yaml", installConfigMap)
	}
	want := decodeSchedulerConfig(t, example)
	got := decodeSchedulerConfig(t, []byte(installed))
	if got.LeaderElection.ResourceNamespace != cm.Namespace {
		t.Errorf("the installed config's lease is in namespace %q, want the ConfigMap's %q", got.LeaderElection.ResourceNamespace, cm.Namespace)
	}
	want.LeaderElection.ResourceNamespace = got.LeaderElection.ResourceNamespace
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s differs from %s beyond the lease namespace (-example +installed):\n%s", installConfigMap, shippedConfig, diff)
	}
}
