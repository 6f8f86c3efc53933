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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
)

// boundPod is a pod created already bound to a node, as if another
// scheduler had placed it: it is part of what NodeLessPods counts. A
// DaemonSet pod is made by a DaemonSet of its own, which runs on that node
// only, so that the garbage collector keeps it.
type boundPod struct {
	node      string
	namespace string // the test's namespace when empty
	labels    map[string]string
	daemonSet bool
}

func (tc *testContext) createBoundPods(pods ...boundPod) {
	tc.t.Helper()
	for i, bp := range pods {
		pod := tc.makePod(fmt.Sprintf("existing-%d", i))
		pod.Spec.NodeName = bp.node
		pod.Spec.SchedulerName = "default-scheduler"
		if bp.namespace != "" {
			pod.Namespace = bp.namespace
		}
		pod.Labels = bp.labels
		if bp.daemonSet {
			tc.createDaemonSetPod(pod)
			continue
		}
		tc.createPod(pod)
	}
}

// createDaemonSetPod creates a DaemonSet named after pod, with pod as its
// template, and waits for its one pod: the template's nodeName makes the
// DaemonSet controller run it on that node only, bound already.
func (tc *testContext) createDaemonSetPod(pod *v1.Pod) {
	tc.t.Helper()
	labels := maps.Clone(pod.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["daemonset"] = pod.Name
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"daemonset": pod.Name}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
	if _, err := adminClient.AppsV1().DaemonSets(ds.Namespace).Create(tc.ctx, ds, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating DaemonSet %s/%s: %v", ds.Namespace, ds.Name, err)
	}
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := adminClient.CoreV1().Pods(ds.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "daemonset=" + ds.Name})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 1 && pods.Items[0].Spec.NodeName == pod.Spec.NodeName, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for the pod of DaemonSet %s/%s on %s: %v", ds.Namespace, ds.Name, pod.Spec.NodeName, err)
	}
}

// TestArgsChangeWhereNewPodsLand runs each case twice, once with the case's
// args and once with the defaults, and checks where one new pod lands: the
// args must make the difference.
func TestArgsChangeWhereNewPodsLand(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*v1.Node
		// existing may refer to the test's namespace as "" and to a second one as "other".
		existing    []boundPod
		args        func(tc *testContext) *v1config.NodeLessPodsArgs
		want        string
		wantDefault string
	}{
		{
			name:  "podSelector counts only matching pods",
			nodes: []*v1.Node{makeNode("sel-a"), makeNode("sel-b")},
			existing: []boundPod{
				{node: "sel-a", labels: map[string]string{"tier": "web"}},
				{node: "sel-a", labels: map[string]string{"tier": "web"}},
				{node: "sel-a", labels: map[string]string{"tier": "web"}},
				{node: "sel-b", labels: map[string]string{"tier": "batch"}},
			},
			args: func(*testContext) *v1config.NodeLessPodsArgs {
				return &v1config.NodeLessPodsArgs{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}}}
			},
			want:        "sel-a",
			wantDefault: "sel-b",
		},
		{
			name:  "namespaces counts only pods in the listed namespaces",
			nodes: []*v1.Node{makeNode("ns-a"), makeNode("ns-b")},
			existing: []boundPod{
				{node: "ns-a", namespace: "other"}, {node: "ns-a", namespace: "other"}, {node: "ns-a", namespace: "other"},
				{node: "ns-b"},
			},
			args: func(tc *testContext) *v1config.NodeLessPodsArgs {
				return &v1config.NodeLessPodsArgs{Namespaces: []string{tc.ns}}
			},
			want:        "ns-a",
			wantDefault: "ns-b",
		},
		{
			name:  "ignoreDaemonSetPods false counts DaemonSet pods",
			nodes: []*v1.Node{makeNode("ds-a"), makeNode("ds-b")},
			existing: []boundPod{
				{node: "ds-a", daemonSet: true}, {node: "ds-a", daemonSet: true}, {node: "ds-a", daemonSet: true},
				{node: "ds-b"},
			},
			args: func(*testContext) *v1config.NodeLessPodsArgs {
				return &v1config.NodeLessPodsArgs{IgnoreDaemonSetPods: ptr.To(false)}
			},
			want:        "ds-b",
			wantDefault: "ds-a",
		},
		{
			name:  "relativeToCapacity compares the share of allocatable pods",
			nodes: []*v1.Node{makeNode("cap-small", withPods(10)), makeNode("cap-big", withPods(100))},
			existing: []boundPod{
				{node: "cap-small"}, {node: "cap-small"}, // 20% full
				{node: "cap-big"}, {node: "cap-big"}, {node: "cap-big"}, {node: "cap-big"}, {node: "cap-big"}, // 5% full
			},
			args: func(*testContext) *v1config.NodeLessPodsArgs {
				return &v1config.NodeLessPodsArgs{RelativeToCapacity: ptr.To(true)}
			},
			want:        "cap-big",
			wantDefault: "cap-small",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			other := tc.otherNamespace()
			tc.createNodes(tt.nodes...)
			for i := range tt.existing {
				if tt.existing[i].namespace == "other" {
					tt.existing[i].namespace = other
				}
			}
			tc.createBoundPods(tt.existing...)
			for _, run := range []struct {
				name string
				args *v1config.NodeLessPodsArgs
				want string
			}{
				{name: "default", want: tt.wantDefault},
				{name: "args", args: tt.args(tc), want: tt.want},
			} {
				sched := tc.startScheduler(nodeLessPodsConfig(run.args))
				pod := tc.makePod("new-pod-" + run.name)
				tc.createPod(pod)
				got := tc.waitScheduled(pod.Name)[pod.Name]
				if got != run.want {
					t.Errorf("%s: the new pod landed on %s, want %s", run.name, got, run.want)
				}
				sched.Stop()
				tc.deletePod(tc.ns, pod.Name)
			}
		})
	}
}

// TestMostPodsConsolidates checks that, with room everywhere, MostPods sends
// new pods to the node that already holds the most, one after another.
func TestMostPodsConsolidates(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(makeNode("most-a"), makeNode("most-b"), makeNode("most-c"))
	tc.createBoundPods(boundPod{node: "most-b"}, boundPod{node: "most-b"}, boundPod{node: "most-c"})
	tc.startScheduler(nodeLessPodsConfig(&v1config.NodeLessPodsArgs{Mode: v1config.NodeLessPodsMostPods}))
	var names []string
	for i := range 4 {
		p := tc.createPod(tc.makePod(fmt.Sprintf("consolidated-%d", i)))
		names = append(names, p.Name)
	}
	for name, node := range tc.waitScheduled(names...) {
		if node != "most-b" {
			t.Errorf("pod %s landed on %s, want most-b (the fullest node)", name, node)
		}
	}
}

// otherNamespace creates a second namespace for the test.
func (tc *testContext) otherNamespace() string {
	tc.t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: tc.ns[:min(len(tc.ns), 40)] + "-other-"}}
	created, err := adminClient.CoreV1().Namespaces().Create(tc.ctx, ns, metav1.CreateOptions{})
	if err != nil {
		tc.t.Fatalf("creating a second namespace: %v", err)
	}
	tc.mu.Lock()
	tc.namespaces = append(tc.namespaces, created.Name)
	tc.mu.Unlock()
	return created.Name
}
