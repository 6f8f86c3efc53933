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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestSettle(t *testing.T) {
	bound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	unsched := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "u"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	deleting := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d", DeletionTimestamp: &metav1.Time{Time: time.Now()}}, Spec: corev1.PodSpec{NodeName: "n1"}}
	succeeded := bound.DeepCopy()
	succeeded.Name, succeeded.Status.Phase = "s", corev1.PodSucceeded
	rs := func(replicas int32, observed bool) *appsv1.ReplicaSet {
		r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)}}
		if observed {
			r.Status.ObservedGeneration = 2
		}
		return r
	}
	sts := func(policy appsv1.PodManagementPolicyType) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), PodManagementPolicy: policy}}
	}
	ds := func(desired int32, observed bool) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: desired}}
		if observed {
			d.Status.ObservedGeneration = 1
		}
		return d
	}
	sts0 := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1}}
	deploy0 := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1}}
	paused := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](0)}}
	suspended := &batchv1.Job{Spec: batchv1.JobSpec{Suspend: ptr.To(true)}}
	job := func(cond batchv1.JobConditionType) *batchv1.Job {
		j := &batchv1.Job{}
		if cond != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
		}
		return j
	}
	tests := []struct {
		name     string
		kind     string
		obj      metav1.Object
		owned    []*corev1.Pod
		settled  bool
		wantPods int
	}{
		{"pod bound", "Pod", bound, []*corev1.Pod{bound}, true, 1},
		{"pod pending", "Pod", pending, []*corev1.Pod{pending}, false, 1},
		{"pod unschedulable", "Pod", unsched, []*corev1.Pod{unsched}, true, 1},
		{"pod being deleted", "Pod", deleting, []*corev1.Pod{deleting}, false, 0},
		{"all replicas", "ReplicaSet", rs(2, true), []*corev1.Pod{bound, unsched}, true, 2},
		{"a replica missing", "ReplicaSet", rs(3, true), []*corev1.Pod{bound, unsched}, false, 2},
		{"a replica pending", "ReplicaSet", rs(2, true), []*corev1.Pod{bound, pending}, false, 2},
		{"change not observed", "ReplicaSet", rs(2, false), []*corev1.Pod{bound, unsched}, false, 2},
		{"a replica being deleted", "ReplicaSet", rs(1, true), []*corev1.Pod{bound, deleting}, false, 1},
		{"deployment", "Deployment", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}, []*corev1.Pod{bound}, true, 1},
		{"ordered stop", "StatefulSet", sts(""), []*corev1.Pod{bound, unsched}, true, 2},
		{"ordered, pending", "StatefulSet", sts(appsv1.OrderedReadyPodManagement), []*corev1.Pod{bound}, false, 1},
		{"parallel, missing", "StatefulSet", sts(appsv1.ParallelPodManagement), []*corev1.Pod{bound, unsched}, false, 2},
		{"daemonset", "DaemonSet", ds(2, true), []*corev1.Pod{bound, unsched}, true, 2},
		{"daemonset not observed", "DaemonSet", ds(2, false), []*corev1.Pod{bound, unsched}, false, 2},
		{"job complete", "Job", job(batchv1.JobComplete), []*corev1.Pod{succeeded}, true, 1},
		{"job failed", "Job", job(batchv1.JobFailed), nil, true, 0},
		{"job running", "Job", job(""), []*corev1.Pod{succeeded, bound}, false, 2},
		{"job stuck", "Job", job(""), []*corev1.Pod{succeeded, unsched}, true, 2},
		{"job starting", "Job", job(""), nil, false, 0},
		{"zero replicas", "ReplicaSet", rs(0, true), nil, true, 0},
		{"zero replicas, change not observed", "ReplicaSet", rs(0, false), nil, false, 0},
		{"zero replicas, one left", "ReplicaSet", rs(0, true), []*corev1.Pod{bound}, false, 1},
		{"zero replicas, one being deleted", "ReplicaSet", rs(0, true), []*corev1.Pod{deleting}, false, 0},
		{"deployment of zero replicas", "Deployment", deploy0, nil, true, 0},
		{"statefulset of zero replicas", "StatefulSet", sts0, nil, true, 0},
		{"job of parallelism 0", "Job", paused, nil, true, 0},
		{"suspended job", "Job", suspended, nil, true, 0},
		{"gone, pods left", "Deployment", nil, []*corev1.Pod{deleting}, false, 0},
		{"gone", "Deployment", nil, nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj metav1.Object
			if tt.obj != nil {
				obj = tt.obj
			}
			got := settle(tt.kind, obj, tt.owned)
			if got.Settled != tt.settled || len(got.Pods) != tt.wantPods {
				t.Errorf("settled %v with %d pods (%s), want %v with %d", got.Settled, len(got.Pods), got.Wants, tt.settled, tt.wantPods)
			}
		})
	}
}
