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
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestZeroReplicas: workloads of no pods (replicas: 0, a Job of
// parallelism 0) are valid and settle as soon as their controllers have
// seen them, so the objects after them are created and the run ends well
// within its timeout; a scale step to 0 removes a workload's pods.
func TestZeroReplicas(t *testing.T) {
	const tmpl = "template: {spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}"
	scenario := filepath.Join(t.TempDir(), "zero.yaml")
	err := os.WriteFile(scenario, []byte(`nodes: [{name: worker}]
objects:
- {kind: Deployment, metadata: {name: web}, spec: {replicas: 0, `+tmpl+`}}
- {kind: StatefulSet, metadata: {name: db}, spec: {replicas: 0, `+tmpl+`}}
- {kind: Job, metadata: {name: batch}, spec: {parallelism: 0, `+tmpl+`}}
- {kind: Pod, metadata: {name: last}, spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}}
steps:
- {scale: {kind: Deployment, name: web, replicas: 2}}
- {scale: {kind: Deployment, name: web, replicas: 0}}
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runPlayground(t, "--config", shippedConfig, "--scenario", scenario, "--output", "json", "--timeout", "2m")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if diff := cmp.Diff(map[string]string{"last": "worker"}, nodeOf(decodeResult(t, out))); diff != "" {
		t.Errorf("pods at the end (-want +got):\n%s", diff)
	}
}
