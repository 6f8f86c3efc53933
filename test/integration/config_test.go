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
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestSchedulerConfigFromFile starts schedulers the way the binary does,
// from a config file through app.Setup: valid args schedule, and every kind
// of bad config stops start-up with an error that names the problem.
func TestSchedulerConfigFromFile(t *testing.T) {
	shipped, err := os.ReadFile("../../manifests/nodelesspods/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The shipped file expects a cluster: point it at the test API server and
	// leave leader election out.
	shippedHere := strings.Replace(string(shipped), "leaderElect: true", "leaderElect: false", 1) +
		fmt.Sprintf("clientConnection:\n  kubeconfig: %q\n", adminKubeconfig)

	tests := []struct {
		name    string
		config  string
		wantErr []string
	}{
		{
			name:   "the shipped config",
			config: shippedHere,
		},
		{
			name:   "valid args",
			config: schedulerConfig(adminKubeconfig, 2, "mode: MostPods\nnamespaces: [default]\nrelativeToCapacity: true"),
		},
		{
			name:    "invalid mode",
			config:  schedulerConfig(adminKubeconfig, 3, "mode: Fewest"),
			wantErr: []string{"mode", `"Fewest"`, `supported values: "LeastPods", "MostPods"`},
		},
		{
			name:    "invalid selector",
			config:  schedulerConfig(adminKubeconfig, 3, "podSelector:\n  matchExpressions:\n  - {key: tier, operator: Near, values: [a]}"),
			wantErr: []string{"podSelector.matchExpressions[0].operator", `"Near"`},
		},
		{
			name:    "duplicate namespace",
			config:  schedulerConfig(adminKubeconfig, 3, "namespaces: [a, a]"),
			wantErr: []string{"namespaces[1]", "Duplicate value"},
		},
		{
			name:    "unknown field",
			config:  schedulerConfig(adminKubeconfig, 3, "mode: LeastPods\nbogus: 1"),
			wantErr: []string{"strict decoding error", "NodeLessPods", `unknown field "bogus"`},
		},
		{
			name:    "removed v1beta3 API",
			config:  strings.Replace(schedulerConfig(adminKubeconfig, 3, ""), "kubescheduler.config.k8s.io/v1", "kubescheduler.config.k8s.io/v1beta3", 1),
			wantErr: []string{"kubescheduler.config.k8s.io/v1beta3"},
		},
		{
			name:    "malformed YAML",
			config:  schedulerConfig(adminKubeconfig, 3, "mode: [LeastPods"),
			wantErr: []string{"yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			if tt.wantErr != nil {
				_, err := tc.setupScheduler(tt.config)
				if err == nil {
					t.Fatalf("start-up succeeded, want an error naming %q", tt.wantErr)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("start-up error %q does not contain %q", err, want)
					}
				}
				return
			}
			tc.createNodes(nodeSpec{name: "config-a"}, nodeSpec{name: "config-b"})
			tc.startScheduler(tt.config)
			tc.createPod(tc.makePod("scheduled"))
			tc.waitScheduled("scheduled")
		})
	}
}
