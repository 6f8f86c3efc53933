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

package settle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

type verdict struct {
	Settled bool
	Pods    []string
	Wants   string
}

// TestSettle is the rules table of settle.go, case by case, each run on the
// object as a typed informer holds it and as a dynamic one does
// (unstructured, converted by the table).
func TestSettle(t *testing.T) {
	bound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	unsched := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "u"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	deleting := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d", DeletionTimestamp: &metav1.Time{Time: time.Now()}}, Spec: corev1.PodSpec{NodeName: "n1"}}
	// gated waits for the OnDemandShare controller, even with a stale
	// Unschedulable condition; kueued carries another gate only.
	gated := unsched.DeepCopy()
	gated.Name, gated.Spec.SchedulingGates = "g", []corev1.PodSchedulingGate{{Name: "example.com/other"}, {Name: share.SchedulingGate}}
	kueued := pending.DeepCopy()
	kueued.Name, kueued.Spec.SchedulingGates = "k", []corev1.PodSchedulingGate{{Name: "example.com/other"}}
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
	deploy1 := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
	deployNotObserved := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1}}
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2)}}
	paused := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](0)}}
	suspended := &batchv1.Job{Spec: batchv1.JobSpec{Suspend: ptr.To(true)}}
	job := func(cond batchv1.JobConditionType) *batchv1.Job {
		j := &batchv1.Job{}
		if cond != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
		}
		return j
	}
	// jobOf runs parallelism pods at once, completions in all (0: unset).
	jobOf := func(parallelism, completions int32) *batchv1.Job {
		j := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism)}}
		if completions > 0 {
			j.Spec.Completions = ptr.To(completions)
		}
		return j
	}
	service := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "generation": int64(1)}}}
	custom := func(observed any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Pool", "metadata": map[string]any{"name": "p", "generation": int64(3)}}}
		if observed != nil {
			u.Object["status"] = map[string]any{"observedGeneration": observed}
		}
		return u
	}
	var (
		podGK     = schema.GroupKind{Kind: "Pod"}
		rsGK      = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
		deployGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
		stsGK     = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
		dsGK      = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
		jobGK     = schema.GroupKind{Group: "batch", Kind: "Job"}
		rcGK      = schema.GroupKind{Kind: "ReplicationController"}
		serviceGK = schema.GroupKind{Kind: "Service"}
		customGK  = schema.GroupKind{Group: "example.com", Kind: "Pool"}
		// A kind named like one of the table's in another group is not it.
		otherDeployGK = schema.GroupKind{Group: "example.com", Kind: "Deployment"}
	)
	pods := func(p ...*corev1.Pod) []*corev1.Pod { return p }
	tests := []struct {
		name  string
		gk    schema.GroupKind
		obj   runtime.Object
		owned []*corev1.Pod
		want  verdict
	}{
		{"pod bound", podGK, bound, pods(bound), verdict{true, []string{"b"}, "bound or unschedulable"}},
		{"pod pending", podGK, pending, pods(pending), verdict{false, []string{"p"}, "bound or unschedulable"}},
		{"pod unschedulable", podGK, unsched, pods(unsched), verdict{true, []string{"u"}, "bound or unschedulable"}},
		{"pod being deleted", podGK, deleting, pods(deleting), verdict{false, nil, "1 pods being deleted"}},
		{"pod gone", podGK, nil, nil, verdict{true, nil, "deleted, 0 pods left"}},
		{"all replicas", rsGK, rs(2, true), pods(unsched, bound), verdict{true, []string{"b", "u"}, "2 pods, has 2 (0 pending)"}},
		{"a replica missing", rsGK, rs(3, true), pods(bound, unsched), verdict{false, []string{"b", "u"}, "3 pods, has 2 (0 pending)"}},
		{"a replica pending", rsGK, rs(2, true), pods(bound, pending), verdict{false, []string{"b", "p"}, "2 pods, has 2 (1 pending)"}},
		{"a replica awaiting the OnDemandShare decision", rsGK, rs(2, true), pods(bound, gated), verdict{false, []string{"b", "g"},
			"2 pods, has 2 (1 pending, 1 awaiting the OnDemandShare decision)"}},
		{"a replica gated by another", rsGK, rs(2, true), pods(bound, kueued), verdict{false, []string{"b", "k"}, "2 pods, has 2 (1 pending)"}},
		{"change not observed", rsGK, rs(2, false), pods(bound, unsched), verdict{false, []string{"b", "u"},
			"2 pods, has 2 (0 pending), its controller has not seen its last change"}},
		{"a replica being deleted", rsGK, rs(1, true), pods(bound, deleting), verdict{false, []string{"b"}, "1 pods being deleted"}},
		{"deployment", deployGK, deploy1, pods(bound), verdict{true, []string{"b"}, "1 pods, has 1 (0 pending)"}},
		{"deployment change not observed", deployGK, deployNotObserved, pods(bound), verdict{false, []string{"b"},
			"1 pods, has 1 (0 pending), its controller has not seen its last change"}},
		{"replication controller", rcGK, rc, pods(bound, unsched), verdict{true, []string{"b", "u"}, "2 pods, has 2 (0 pending)"}},
		{"replication controller missing one", rcGK, rc, pods(bound), verdict{false, []string{"b"}, "2 pods, has 1 (0 pending)"}},
		{"ordered stop", stsGK, sts(""), pods(bound, unsched), verdict{true, []string{"b", "u"}, "3 pods, has 2 (0 pending)"}},
		{"ordered, pending", stsGK, sts(appsv1.OrderedReadyPodManagement), pods(bound), verdict{false, []string{"b"}, "3 pods, has 1 (0 pending)"}},
		{"parallel, missing", stsGK, sts(appsv1.ParallelPodManagement), pods(bound, unsched), verdict{false, []string{"b", "u"}, "3 pods, has 2 (0 pending)"}},
		{"daemonset", dsGK, ds(2, true), pods(bound, unsched), verdict{true, []string{"b", "u"}, "2 pods, has 2 (0 pending)"}},
		{"daemonset not observed", dsGK, ds(2, false), pods(bound, unsched), verdict{false, []string{"b", "u"},
			"2 pods, has 2 (0 pending), its controller has not seen its last change"}},
		{"job complete", jobGK, job(batchv1.JobComplete), pods(succeeded), verdict{true, []string{"s"}, ""}},
		{"job failed", jobGK, job(batchv1.JobFailed), nil, verdict{true, nil, ""}},
		{"job running", jobGK, job(""), pods(succeeded, bound), verdict{false, []string{"b", "s"}, "to finish"}},
		{"job stuck", jobGK, job(""), pods(succeeded, unsched), verdict{true, []string{"s", "u"}, "to finish"}},
		{"job starting", jobGK, job(""), nil, verdict{false, nil, "to finish"}},
		// Pods held by a seat they were given: the others wait until one ends.
		{"job running all it may, one waiting", jobGK, jobOf(2, 0), pods(bound, unsched), verdict{true, []string{"b", "u"}, "to finish"}},
		{"job not running all it may", jobGK, jobOf(3, 0), pods(bound, unsched), verdict{false, []string{"b", "u"}, "to finish"}},
		{"job running what is left to complete", jobGK, jobOf(3, 3), pods(succeeded, bound, unsched), verdict{true, []string{"b", "s", "u"}, "to finish"}},
		{"job running all it may, one pending", jobGK, jobOf(2, 0), pods(pending, unsched), verdict{false, []string{"p", "u"}, "to finish"}},
		{"job running all it may, none waiting", jobGK, jobOf(1, 0), pods(bound), verdict{false, []string{"b"}, "to finish"}},
		{"zero replicas", rsGK, rs(0, true), nil, verdict{true, nil, "0 pods, has 0 (0 pending)"}},
		{"zero replicas, change not observed", rsGK, rs(0, false), nil, verdict{false, nil,
			"0 pods, has 0 (0 pending), its controller has not seen its last change"}},
		{"zero replicas, one left", rsGK, rs(0, true), pods(bound), verdict{false, []string{"b"}, "0 pods, has 1 (0 pending)"}},
		{"zero replicas, one being deleted", rsGK, rs(0, true), pods(deleting), verdict{false, nil, "1 pods being deleted"}},
		{"deployment of zero replicas", deployGK, deploy0, nil, verdict{true, nil, "0 pods, has 0 (0 pending)"}},
		{"statefulset of zero replicas", stsGK, sts0, nil, verdict{true, nil, "0 pods, has 0 (0 pending)"}},
		{"job of parallelism 0", jobGK, paused, nil, verdict{true, nil, "no pods: it runs none"}},
		{"job of parallelism 0, a pod left", jobGK, paused, pods(bound), verdict{false, []string{"b"}, "no pods: it runs none"}},
		{"suspended job", jobGK, suspended, nil, verdict{true, nil, "no pods: it runs none"}},
		{"gone, pods left", deployGK, nil, pods(deleting), verdict{false, nil, "deleted, 1 pods left"}},
		{"gone", deployGK, nil, nil, verdict{true, nil, "deleted, 0 pods left"}},
		{"service without pods", serviceGK, service, nil, verdict{true, nil, "its 0 pods bound or unschedulable (0 pending)"}},
		{"service with a pending pod", serviceGK, service, pods(bound, pending), verdict{false, []string{"b", "p"},
			"its 2 pods bound or unschedulable (1 pending)"}},
		{"service with a pod being deleted", serviceGK, service, pods(deleting), verdict{false, nil, "1 pods being deleted"}},
		{"custom resource observed", customGK, custom(int64(3)), pods(bound, unsched), verdict{true, []string{"b", "u"},
			"its 2 pods bound or unschedulable (0 pending)"}},
		{"custom resource not observed", customGK, custom(int64(2)), pods(bound), verdict{false, []string{"b"},
			"its 1 pods bound or unschedulable (0 pending), its controller has not seen its last change"}},
		{"custom resource without status", customGK, custom(nil), nil, verdict{true, nil, "its 0 pods bound or unschedulable (0 pending)"}},
		{"custom resource, observedGeneration not a number", customGK, custom("3"), nil, verdict{true, nil,
			"its 0 pods bound or unschedulable (0 pending)"}},
		{"custom resource gone, a pod left", customGK, nil, pods(bound), verdict{false, []string{"b"}, "deleted, 1 pods left"}},
		{"another group's Deployment", otherDeployGK, custom(int64(3)), nil, verdict{true, nil, "its 0 pods bound or unschedulable (0 pending)"}},
	}
	for _, tt := range tests {
		forms := map[string]runtime.Object{"as given": tt.obj}
		if _, ok := tt.obj.(*unstructured.Unstructured); !ok && tt.obj != nil {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			forms["unstructured"] = &unstructured.Unstructured{Object: m}
		}
		for form, obj := range forms {
			t.Run(tt.name+"/"+form, func(t *testing.T) {
				s := settle(tt.gk, obj, tt.owned)
				got := verdict{Settled: s.Settled, Wants: s.Wants}
				for _, p := range s.Pods {
					got.Pods = append(got.Pods, p.Name)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("settle (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestSettleUnreadable: an object of a table kind that does not convert to
// its type is not settled, and the reason says why.
func TestSettleUnreadable(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": "two"}}}
	s := settle(schema.GroupKind{Group: "apps", Kind: "Deployment"}, u, nil)
	if s.Settled || s.Wants == "" {
		t.Errorf("settled %v (%q), want not settled with the conversion error", s.Settled, s.Wants)
	}
}
