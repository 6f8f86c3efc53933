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
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

// workloadNodeLabel marks a test's nodes, so that its DaemonSet runs on
// them only.
const workloadNodeLabel = "integration.adminsched.io/test"

// template is a pod template for our scheduler, labelled app=name.
func (tc *testContext) template(name string) v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec:       tc.makePod(name).Spec,
	}
}

func (tc *testContext) deployment(name string, replicas int) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: tc.template(name),
		},
	}
}

// waitPodsPhase waits until exactly want pods labelled app=name exist, all
// in phase, and returns them by name.
func (tc *testContext) waitPodsPhase(name string, want int, phase v1.PodPhase) map[string]*v1.Pod {
	tc.t.Helper()
	var got map[string]*v1.Pod
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := adminClient.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return false, err
		}
		got = map[string]*v1.Pod{}
		for i := range pods.Items {
			got[pods.Items[i].Name] = &pods.Items[i]
		}
		if len(got) != want {
			return false, nil
		}
		for _, p := range got {
			if p.Status.Phase != phase || p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		phases := map[string]string{}
		for n, p := range got {
			phases[n] = fmt.Sprintf("%s on %q", p.Status.Phase, p.Spec.NodeName)
		}
		tc.t.Fatalf("waiting for %d pods app=%s %s: %v (so far %v)", want, name, phase, err, phases)
	}
	return got
}

// perNode counts pods per node, with every node of nodes present.
func perNode(nodes []string, pods map[string]*v1.Pod) map[string]int {
	counts := map[string]int{}
	for _, n := range nodes {
		counts[n] = 0
	}
	for _, p := range pods {
		counts[p.Spec.NodeName]++
	}
	return counts
}

// TestWorkloads applies a DaemonSet, a StatefulSet, a Deployment and a Job
// for our scheduler (NodeLessPods, LeastPods), one after the other: the
// controllers make their pods, our scheduler binds them and KWOK runs them
// on nodes it keeps Ready with their leases.
func TestWorkloads(t *testing.T) {
	tc := newTestContext(t)
	labels := map[string]string{workloadNodeLabel: tc.ns}
	nodes := tc.createNodes(makeNode("wl-a", withLabels(labels)), makeNode("wl-b", withLabels(labels)), makeNode("wl-c", withLabels(labels)))
	leases := tc.waitNodesRunByKWOK(nodes)
	tc.startScheduler(nodeLessPodsConfig(nil))
	apps := adminClient.AppsV1()

	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: tc.ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: tc.template("agent"),
		},
	}
	ds.Spec.Template.Spec.NodeSelector = labels
	if _, err := apps.DaemonSets(tc.ns).Create(tc.ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := perNode(nodes, tc.waitPodsPhase("agent", len(nodes), v1.PodRunning)); got[nodes[0]] != 1 || got[nodes[1]] != 1 || got[nodes[2]] != 1 {
		t.Errorf("DaemonSet pods per node %v, want one on each node", got)
	}

	// OrderedReady: web-1 is created once web-0 runs and is Ready, which
	// KWOK makes it.
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: tc.ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: tc.template("web"),
		},
	}
	if _, err := apps.StatefulSets(tc.ns).Create(tc.ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := tc.waitPodsPhase("web", 3, v1.PodRunning)
	if names := slices.Sorted(maps.Keys(web)); !slices.Equal(names, []string{"web-0", "web-1", "web-2"}) {
		t.Errorf("StatefulSet pods %v, want web-0, web-1, web-2", names)
	}
	// DaemonSet pods are not counted (ignoreDaemonSetPods): NodeLessPods
	// sends each replica to a node with no web pod yet.
	if got := perNode(nodes, web); spread(got) != 0 {
		t.Errorf("StatefulSet pods per node %v, want one on each node", got)
	}

	// Each node holds one counted pod: 6 replicas make it 3 everywhere.
	if _, err := apps.Deployments(tc.ns).Create(tc.ctx, tc.deployment("api", 6), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := perNode(nodes, tc.waitPodsPhase("api", 6, v1.PodRunning)); got[nodes[0]] != 2 || got[nodes[1]] != 2 || got[nodes[2]] != 2 {
		t.Errorf("Deployment pods per node %v, want 2 on each node (LeastPods)", got)
	}

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: tc.ns},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(int32(3)),
			Parallelism: ptr.To(int32(3)),
			Template:    tc.template("batch"),
		},
	}
	job.Spec.Template.Spec.RestartPolicy = v1.RestartPolicyNever
	if _, err := adminClient.BatchV1().Jobs(tc.ns).Create(tc.ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, p := range tc.waitPodsPhase("batch", 3, v1.PodSucceeded) {
		if !slices.Contains(nodes, p.Spec.NodeName) {
			t.Errorf("Job pod %s ran on %q, not a node of the test", name, p.Spec.NodeName)
		}
	}
	tc.waitJobComplete("batch")
	tc.waitLeasesRenewed(leases)
}

// waitNodesRunByKWOK waits until KWOK runs every node: Ready as its
// kubelet reports it, with a held lease in kube-node-lease. It returns the
// leases' renew times.
func (tc *testContext) waitNodesRunByKWOK(nodes []string) map[string]time.Time {
	tc.t.Helper()
	renewed, err := localcluster.WaitNodesManaged(tc.ctx, adminClient, 20*time.Second, nodes...)
	if err != nil {
		tc.t.Fatal(err)
	}
	// KWOK's node-start stage runs beside the lease's creation.
	var last string
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range nodes {
			node, err := adminClient.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !strings.HasPrefix(node.Status.NodeInfo.KubeletVersion, "kwok-") || !nodeReady(node) {
				last = fmt.Sprintf("node %s: kubelet %q, conditions %v", name, node.Status.NodeInfo.KubeletVersion, node.Status.Conditions)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for KWOK to start nodes %v (Ready, kubelet kwok-*): %v; last: %s", nodes, err, last)
	}
	return renewed
}

func nodeReady(node *v1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue && c.Reason == "KubeletReady"
		}
	}
	return false
}

// waitLeasesRenewed waits until every node lease was renewed after the
// given times: KWOK renews it every quarter of its 40 s duration.
func (tc *testContext) waitLeasesRenewed(since map[string]time.Time) {
	tc.t.Helper()
	err := wait.PollUntilContextTimeout(tc.ctx, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for name, t := range since {
			lease, err := adminClient.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(t) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		tc.t.Errorf("node leases not renewed since %v: %v", since, err)
	}
}

func (tc *testContext) waitJobComplete(name string) {
	tc.t.Helper()
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		job, err := adminClient.BatchV1().Jobs(tc.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == v1.ConditionTrue {
				return job.Status.Succeeded == ptr.Deref(job.Spec.Completions, 1), nil
			}
		}
		return false, nil
	})
	if err != nil {
		tc.t.Errorf("Job %s did not complete: %v", name, err)
	}
}

// scaleDeployment sets the replicas of a Deployment and waits until exactly
// that many of its pods exist, the removed ones gone.
func (tc *testContext) scaleDeployment(name string, replicas int) {
	tc.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := adminClient.AppsV1().Deployments(tc.ns).Patch(tc.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		tc.t.Fatalf("scaling Deployment %s to %d: %v", name, replicas, err)
	}
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := adminClient.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		return err == nil && len(pods.Items) == replicas, err
	})
	if err != nil {
		tc.t.Fatalf("waiting for Deployment %s to have %d pods: %v", name, replicas, err)
	}
}

// TestScaleUpRepacks spreads a Deployment of 6 over three nodes with
// LeastPods, scales it down to 3 (the ReplicaSet controller picks the pods
// to remove, so where the 3 left are varies) and back up to 6 with a
// second scheduler. Nodes, besides the Deployment's pods:
//
//	<p>-a, <p>-b, <p>-c  empty
//	<p>-full             4 pods, its allocatable pods: the busiest, no room
//
// With consolidation-config.yaml (MostPods), the 3 new pods all go to the
// node that held the most replicas; with LeastPods they even the nodes out.
func TestScaleUpRepacks(t *testing.T) {
	const replicas, scaledDown = 6, 3
	tests := []struct {
		name   string
		prefix string
		config func(t *testing.T) *configv1.KubeSchedulerConfiguration
		check  func(t *testing.T, before, after map[string]int)
	}{
		{
			name:   "consolidation-config.yaml",
			prefix: "repack",
			config: func(t *testing.T) *configv1.KubeSchedulerConfiguration {
				return consolidationConfig(t, func(profile *configv1.KubeSchedulerProfile) error {
					profile.SchedulerName = ptr.To(schedulerName)
					return nil
				})
			},
			check: func(t *testing.T, before, after map[string]int) {
				busiest := slices.Max(slices.Collect(maps.Values(before)))
				for node, n := range after {
					if added := n - before[node]; added != 0 && (added != replicas-scaledDown || before[node] != busiest) {
						t.Errorf("replicas per node %v after scaling up from %v: want all %d new ones on one node that held %d", after, before, replicas-scaledDown, busiest)
						return
					}
				}
			},
		},
		{
			name:   "LeastPods",
			prefix: "spread",
			config: func(*testing.T) *configv1.KubeSchedulerConfiguration { return nodeLessPodsConfig(nil) },
			check: func(t *testing.T, before, after map[string]int) {
				if s := spread(after); s != 0 {
					t.Errorf("replicas per node %v after scaling up from %v: spread %d, want 0", after, before, s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			p := tt.prefix
			nodes := tc.createNodes(makeNode(p+"-a", withHostnameLabel()), makeNode(p+"-b", withHostnameLabel()), makeNode(p+"-c", withHostnameLabel()), makeNode(p+"-full", withHostnameLabel(), withPods(4)))
			tc.createBoundPods(boundPod{node: p + "-full"}, boundPod{node: p + "-full"}, boundPod{node: p + "-full"}, boundPod{node: p + "-full"})
			isWeb := func(pod *v1.Pod) bool { return pod.Labels["app"] == "web" }

			spreading := tc.startScheduler(nodeLessPodsConfig(nil))
			d := tc.deployment("web", replicas)
			tc.waitScheduled(tc.createDeploymentPods(d)...)
			if got := tc.podsPerNode(nodes[:3], isWeb); spread(got) != 0 {
				t.Fatalf("replicas per node %v, want 2 on each of the empty nodes", got)
			}
			spreading.Stop()

			tc.scaleDeployment("web", scaledDown)
			before := tc.podsPerNode(nodes[:3], isWeb)
			tc.startScheduler(tt.config(t))
			tc.scaleDeployment("web", replicas)
			tc.waitPodsPhase("web", replicas, v1.PodRunning)
			after := tc.podsPerNode(nodes[:3], isWeb)
			t.Logf("replicas per node: %v after scaling down, %v after scaling up", before, after)
			tt.check(t, before, after)
		})
	}
}

// TestDeletedDeploymentPodsAreCollected deletes a Deployment with the
// default background propagation: the garbage collector deletes its
// ReplicaSet, then the ReplicaSet's running pods.
func TestDeletedDeploymentPodsAreCollected(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(makeNode("gc-a"))
	tc.startScheduler(nodeLessPodsConfig(nil))
	tc.createDeploymentPods(tc.deployment("doomed", 3))
	tc.waitPodsPhase("doomed", 3, v1.PodRunning)
	if err := adminClient.AppsV1().Deployments(tc.ns).Delete(tc.ctx, "doomed", metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		rss, err := adminClient.AppsV1().ReplicaSets(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=doomed"})
		if err != nil {
			return false, err
		}
		pods, err := adminClient.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=doomed"})
		return len(rss.Items) == 0 && len(pods.Items) == 0, err
	})
	if err != nil {
		t.Errorf("the deleted Deployment's ReplicaSet and pods are still there: %v", err)
	}
}
