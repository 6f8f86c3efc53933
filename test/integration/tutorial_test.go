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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// createReplicaSetPods creates a ReplicaSet object and, since no controller
// runs here, its replicas as pods it controls, all at once.
func (tc *testContext) createReplicaSetPods(name string, replicas int, mutate func(*v1.Pod)) []string {
	tc.t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       tc.makePod("template").Spec,
			},
		},
	}
	rs, err := adminClient.AppsV1().ReplicaSets(tc.ns).Create(tc.ctx, rs, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating ReplicaSet %s: %v", name, err)
	}
	var names []string
	for i := range replicas {
		pod := tc.makePod(fmt.Sprintf("%s-%d", name, i))
		pod.Labels = map[string]string{"app": name}
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
		if mutate != nil {
			mutate(pod)
		}
		tc.createPod(pod)
		names = append(names, pod.Name)
	}
	return names
}

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
