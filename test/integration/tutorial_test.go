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
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestTutorialScenario is the tutorial's walk-through: on 3 nodes, test-pod-1
// and test-pod-2 land on different nodes, then the 5 replicas of a Deployment
// spread so that no two nodes differ by more than one pod.
func TestTutorialScenario(t *testing.T) {
	tc := newTestContext(t)
	nodes := tc.createNodes(nodeSpec{name: "tutorial-1"}, nodeSpec{name: "tutorial-2"}, nodeSpec{name: "tutorial-3"})
	tc.startScheduler(schedulerConfig(adminKubeconfig, 3, ""))

	tc.createPod(tc.makePod("test-pod-1"))
	first := tc.waitScheduled("test-pod-1")
	tc.createPod(tc.makePod("test-pod-2"))
	second := tc.waitScheduled("test-pod-2")
	if first["test-pod-1"] == second["test-pod-2"] {
		t.Errorf("test-pod-1 and test-pod-2 both landed on %s, want different nodes", first["test-pod-1"])
	}

	replicas := tc.createReplicaSetPods("test-deployment", 5, nil)
	tc.waitScheduled(replicas...)
	all := tc.podsPerNode(nodes, nil)
	if s := spread(all); s > 1 {
		t.Errorf("pods per node %v: spread %d, want at most 1", all, s)
	}
	onlyReplicas := tc.podsPerNode(nodes, func(p *v1.Pod) bool { return p.Labels["app"] == "test-deployment" })
	if s := spread(onlyReplicas); s > 1 {
		t.Errorf("replicas per node %v: spread %d, want at most 1", onlyReplicas, s)
	}
	t.Logf("pods per node: %v (replicas: %v)", all, onlyReplicas)
}
