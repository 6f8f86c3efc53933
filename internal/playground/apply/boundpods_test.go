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

package apply

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// boundTestDaemonSet is a DaemonSet pinned to nodes, as the plan makes one
// for a snapshot's DaemonSet pods.
func boundTestDaemonSet(ns, name string, nodes ...string) *appsv1.DaemonSet {
	labels := map[string]string{"bound-test/ds": name}
	var terms []corev1.NodeSelectorTerm
	for _, n := range nodes {
		terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{n},
		}}})
	}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SchedulerName: "no-such-scheduler",
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
					}},
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{{Name: "c-0", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
}

// boundTestPod is a pod bound to node; owner, when set, names its
// DaemonSet, its UID left empty as the plan leaves it.
func boundTestPod(ns, name, node, owner string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"kept": "yes"}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c-0", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if owner != "" {
		pod.Labels = map[string]string{"bound-test/ds": owner}
		pod.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: owner, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
	}
	return pod
}

// boundTestNodes creates ready nodes on the shared cluster.
func boundTestNodes(t *testing.T, client kubernetes.Interface, names ...string) {
	t.Helper()
	var nodes []*corev1.Node
	for _, n := range names {
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{corev1.LabelHostname: n}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
				Capacity:    corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
			},
		})
	}
	if err := CreateNodes(context.Background(), client, nodes, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCreateBoundPods: namespaces made, each DaemonSet pod's owner UID
// filled from the DaemonSet created, the DaemonSet controller waited for,
// the pods given left as they were, and the pods created left Pending by
// KWOK (which starts a pod bound without the annotation).
func TestCreateBoundPods(t *testing.T) {
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(applyTestConfig(t).Config)
	boundTestNodes(t, client, "bound-n1", "bound-n2")
	daemonSets := []*appsv1.DaemonSet{boundTestDaemonSet("bound-agents", "agent", "bound-n1", "bound-n2")}
	pods := []*corev1.Pod{
		boundTestPod("bound-agents", "agent-n1", "bound-n1", "agent"),
		boundTestPod("bound-agents", "agent-n2", "bound-n2", "agent"),
		boundTestPod("bound-apps", "web-1", "bound-n1", ""),
	}
	var progress bytes.Buffer
	if err := CreateBoundPods(ctx, client, daemonSets, pods, true, &progress); err != nil {
		t.Fatal(err)
	}
	if got := progress.String(); !strings.HasPrefix(got, "creating 3 bound pods\ncreated 3 bound pods in ") {
		t.Errorf("progress %q, want the lines creating and created 3 bound pods", got)
	}
	for _, pod := range pods {
		if pod.OwnerReferences != nil && pod.OwnerReferences[0].UID != "" || len(pod.Annotations) != 1 {
			t.Errorf("CreateBoundPods changed the pod %s given: %v, %v", pod.Name, pod.OwnerReferences, pod.Annotations)
		}
	}
	for _, ns := range []string{"bound-agents", "bound-apps"} {
		if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
	ds, err := client.AppsV1().DaemonSets("bound-agents").Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Status.CurrentNumberScheduled != 2 || ds.Status.ObservedGeneration != ds.Generation {
		t.Errorf("CreateBoundPods returned before the DaemonSet controller observed the DaemonSet: %+v", ds.Status)
	}

	// A pod bound without the annotation, which KWOK starts: once it runs,
	// KWOK has had its chance at the bound pods too.
	control := boundTestPod("bound-apps", "control", "bound-n2", "")
	if _, err := client.CoreV1().Pods("bound-apps").Create(ctx, control, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods("bound-apps").Get(ctx, "control", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("KWOK did not start the control pod: %v", err)
	}
	time.Sleep(time.Second)

	type podState struct {
		Node, Phase, Owner, Annotation, Kept string
	}
	got := map[string]podState{}
	for _, pod := range pods {
		p, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := podState{Node: p.Spec.NodeName, Phase: string(p.Status.Phase), Annotation: p.Annotations[workload.BoundPodAnnotation], Kept: p.Annotations["kept"]}
		if len(p.OwnerReferences) == 1 {
			s.Owner = fmt.Sprintf("%s/%s uid ok: %t", p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name, p.OwnerReferences[0].UID == ds.UID)
		}
		got[p.Namespace+"/"+p.Name] = s
	}
	want := map[string]podState{
		"bound-agents/agent-n1": {Node: "bound-n1", Phase: "Pending", Owner: "DaemonSet/agent uid ok: true", Annotation: "true", Kept: "yes"},
		"bound-agents/agent-n2": {Node: "bound-n2", Phase: "Pending", Owner: "DaemonSet/agent uid ok: true", Annotation: "true", Kept: "yes"},
		"bound-apps/web-1":      {Node: "bound-n1", Phase: "Pending", Annotation: "true", Kept: "yes"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound pods (-want +got):\n%s", diff)
	}
}

// TestCreateBoundPodsRefuses: bad input is refused before anything is
// created, with an error naming the pod and what is wrong.
func TestCreateBoundPodsRefuses(t *testing.T) {
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(applyTestConfig(t).Config)
	tests := []struct {
		name       string
		daemonSets []*appsv1.DaemonSet
		pods       []*corev1.Pod
		wantErr    string
	}{{
		name:       "a DaemonSet not given",
		daemonSets: []*appsv1.DaemonSet{boundTestDaemonSet("bound-refused", "agent", "bound-n1")},
		pods: []*corev1.Pod{
			boundTestPod("bound-refused", "agent-n1", "bound-n1", "agent"),
			boundTestPod("bound-refused", "logs-n1", "bound-n1", "logs"),
		},
		wantErr: "bound pod bound-refused/logs-n1: metadata.ownerReferences[0] names DaemonSet bound-refused/logs, which is not among the DaemonSets to create",
	}, {
		name:       "a DaemonSet of another namespace",
		daemonSets: []*appsv1.DaemonSet{boundTestDaemonSet("bound-refused-other", "agent", "bound-n1")},
		pods:       []*corev1.Pod{boundTestPod("bound-refused", "agent-n1", "bound-n1", "agent")},
		wantErr:    "names DaemonSet bound-refused/agent, which is not among",
	}, {
		name:    "no node",
		pods:    []*corev1.Pod{boundTestPod("bound-refused", "web", "", "")},
		wantErr: "bound pod bound-refused/web: spec.nodeName is empty",
	}, {
		name:    "a nil pod",
		pods:    []*corev1.Pod{boundTestPod("bound-refused", "web", "bound-n1", ""), nil},
		wantErr: "bound pod 1 is nil",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CreateBoundPods(ctx, client, tc.daemonSets, tc.pods, true, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CreateBoundPods: %v, want an error containing %q", err, tc.wantErr)
			}
			for _, ns := range []string{"bound-refused", "bound-refused-other"} {
				if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("namespace %s: %v, want it not created", ns, err)
				}
			}
		})
	}
}
