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

package workload

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

func ref(apiVersion, kind, name string, uid types.UID, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(controller)}
}

func pod(refs ...metav1.OwnerReference) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: refs}}
}

func replicaSet(name string, uid types.UID, refs ...metav1.OwnerReference) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid, OwnerReferences: refs}}
}

// lister serves the ReplicaSets of namespace ns.
func lister(rss ...*appsv1.ReplicaSet) func(string, string) (*appsv1.ReplicaSet, error) {
	return func(namespace, name string) (*appsv1.ReplicaSet, error) {
		for _, rs := range rss {
			if rs.Namespace == namespace && rs.Name == name {
				return rs, nil
			}
		}
		return nil, errors.New("not found")
	}
}

func TestOf(t *testing.T) {
	rsRef := ref("apps/v1", "ReplicaSet", "web-1", "rs-uid", true)
	deploy := ref("apps/v1", "Deployment", "web", "d-uid", true)
	rsKey := Key{Kind: config.WorkloadReplicaSet, Namespace: "ns", Name: "web-1", UID: "rs-uid"}
	tests := []struct {
		name   string
		pod    *v1.Pod
		rss    func(string, string) (*appsv1.ReplicaSet, error)
		want   Key
		wantOK bool
	}{
		{name: "no owner", pod: pod()},
		{name: "an owner that is not the controller", pod: pod(ref("apps/v1", "StatefulSet", "db", "s", false))},
		{name: "DaemonSet", pod: pod(ref("apps/v1", "DaemonSet", "ds", "x", true))},
		{name: "a Job of another group", pod: pod(ref("example.com/v1", "Job", "j", "x", true))},
		{name: "a bad apiVersion", pod: pod(ref("a/b/c", "Job", "j", "x", true))},
		{
			name: "StatefulSet", pod: pod(ref("apps/v1", "StatefulSet", "db", "s-uid", true)),
			want: Key{Kind: config.WorkloadStatefulSet, Namespace: "ns", Name: "db", UID: "s-uid"}, wantOK: true,
		},
		{
			name: "Job", pod: pod(ref("batch/v1", "Job", "j", "j-uid", true)),
			want: Key{Kind: config.WorkloadJob, Namespace: "ns", Name: "j", UID: "j-uid"}, wantOK: true,
		},
		{
			name: "the controller among other owners", pod: pod(ref("v1", "ConfigMap", "c", "c", false), ref("batch/v1", "Job", "j", "j-uid", true)),
			want: Key{Kind: config.WorkloadJob, Namespace: "ns", Name: "j", UID: "j-uid"}, wantOK: true,
		},
		{
			name: "a Deployment's ReplicaSet", pod: pod(rsRef), rss: lister(replicaSet("web-1", "rs-uid", deploy)),
			want: Key{Kind: config.WorkloadDeployment, Namespace: "ns", Name: "web", UID: "d-uid"}, wantOK: true,
		},
		{name: "a bare ReplicaSet", pod: pod(rsRef), rss: lister(replicaSet("web-1", "rs-uid")), want: rsKey, wantOK: true},
		{
			name: "a ReplicaSet that a Deployment owns without controlling it", pod: pod(rsRef),
			rss: lister(replicaSet("web-1", "rs-uid", ref("apps/v1", "Deployment", "web", "d-uid", false))), want: rsKey, wantOK: true,
		},
		{
			name: "a ReplicaSet controlled by another kind", pod: pod(rsRef),
			rss: lister(replicaSet("web-1", "rs-uid", ref("argoproj.io/v1alpha1", "Rollout", "web", "r", true))), want: rsKey, wantOK: true,
		},
		{name: "the ReplicaSet is not found", pod: pod(rsRef), rss: lister(), want: rsKey, wantOK: true},
		{
			name: "a new ReplicaSet of the same name", pod: pod(rsRef),
			rss: lister(replicaSet("web-1", "other-uid", deploy)), want: rsKey, wantOK: true,
		},
		{name: "no lister", pod: pod(rsRef), want: rsKey, wantOK: true},
		{
			name: "a lister that returns nil", pod: pod(rsRef),
			rss: func(string, string) (*appsv1.ReplicaSet, error) { return nil, nil }, want: rsKey, wantOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Of(tc.pod, tc.rss)
			if ok != tc.wantOK {
				t.Fatalf("Of: ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
			// MayBe must hold every kind Of can return, without a lister.
			kinds := MayBe(tc.pod)
			if ok != (kinds != nil) {
				t.Errorf("MayBe = %v; Of ok = %v", kinds, ok)
			}
			if ok && !contains(kinds, got.Kind) {
				t.Errorf("MayBe = %v lacks %s", kinds, got.Kind)
			}
		})
	}
}

func contains(kinds []config.WorkloadKind, k config.WorkloadKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func TestLive(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		pod  v1.Pod
		want bool
	}{
		{name: "pending", pod: v1.Pod{Status: v1.PodStatus{Phase: v1.PodPending}}, want: true},
		{name: "running", pod: v1.Pod{Status: v1.PodStatus{Phase: v1.PodRunning}}, want: true},
		{name: "succeeded", pod: v1.Pod{Status: v1.PodStatus{Phase: v1.PodSucceeded}}},
		{name: "failed", pod: v1.Pod{Status: v1.PodStatus{Phase: v1.PodFailed}}},
		{name: "being deleted", pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: v1.PodStatus{Phase: v1.PodRunning}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Live(&tc.pod); got != tc.want {
				t.Errorf("Live = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIndexByController(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{name: "not an object", obj: "x"},
		{name: "no controller", obj: pod(ref("apps/v1", "ReplicaSet", "a", "u", false))},
		{name: "a pod's controller", obj: pod(ref("v1", "ConfigMap", "c", "c", false), ref("apps/v1", "ReplicaSet", "a", "u", true)), want: []string{"u"}},
		{name: "a ReplicaSet's Deployment", obj: replicaSet("a", "r", ref("apps/v1", "Deployment", "d", "d-uid", true)), want: []string{"d-uid"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := IndexByController(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("IndexByController (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMayBeAllocatesNothing: the scheduler asks for every pod it schedules.
func TestMayBeAllocatesNothing(t *testing.T) {
	p := pod(ref("apps/v1", "ReplicaSet", "web-1", "rs-uid", true))
	if n := testing.AllocsPerRun(100, func() { _ = MayBe(p) }); n != 0 {
		t.Errorf("MayBe allocates %v times per call, want 0", n)
	}
}
