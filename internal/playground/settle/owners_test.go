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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// newCacheWatcher is a Watcher with an empty pod cache and no informer:
// the tests feed it as the informers' handlers would.
func newCacheWatcher() *Watcher {
	return &Watcher{
		pods:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{controllerIndex: indexByController}),
		parent:      map[types.UID]types.UID{},
		children:    map[types.UID]sets.Set[types.UID]{},
		gone:        sets.New[types.UID](),
		subscribers: map[chan struct{}]struct{}{},
	}
}

func objMeta(name string, controller types.UID) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)}
	if controller != "" {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Owner", Name: string(controller), UID: controller, Controller: ptr.To(true)}}
	}
	return m
}

func addPod(t *testing.T, w *Watcher, name string, controller types.UID) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: objMeta(name, controller)}
	if err := w.pods.Add(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func ownedNames(w *Watcher, t workload.Target) []string {
	var names []string
	for _, p := range w.owned(t) {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

func target(kind, group, resource, uid string) workload.Target {
	return workload.Target{Kind: kind, Namespace: "ns", Name: uid, UID: types.UID(uid),
		Resource: schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}}
}

// TestOwned: the pods of a target are those whose controller is the target
// or an intermediate the target controls; a Pod owns itself.
func TestOwned(t *testing.T) {
	w := newCacheWatcher()
	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs1", "d")})
	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs2", "d")})
	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs3", "")})
	w.intermediateChanged(&batchv1.Job{ObjectMeta: objMeta("j", "cj")})
	addPod(t, w, "p1", "rs1")
	addPod(t, w, "p2", "rs2")
	addPod(t, w, "p3", "j")
	addPod(t, w, "p4", "s")
	addPod(t, w, "p5", "")
	p6 := &corev1.Pod{ObjectMeta: objMeta("p6", "")}
	p6.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: "d", UID: "d"}} // not its controller
	if err := w.pods.Add(p6); err != nil {
		t.Fatal(err)
	}
	addPod(t, w, "p7", "rs3")
	recreated := target("Pod", "", "pods", "p5")
	recreated.UID = "old"
	tests := []struct {
		name   string
		target workload.Target
		want   []string
	}{
		{"deployment through its replicasets", target("Deployment", "apps", "deployments", "d"), []string{"p1", "p2"}},
		{"cronjob through its jobs", target("CronJob", "batch", "cronjobs", "cj"), []string{"p3"}},
		{"job", target("Job", "batch", "jobs", "j"), []string{"p3"}},
		{"replicaset", target("ReplicaSet", "apps", "replicasets", "rs1"), []string{"p1"}},
		{"orphan replicaset", target("ReplicaSet", "apps", "replicasets", "rs3"), []string{"p7"}},
		{"statefulset, direct", target("StatefulSet", "apps", "statefulsets", "s"), []string{"p4"}},
		{"pod", target("Pod", "", "pods", "p5"), []string{"p5"}},
		{"pod of another UID", recreated, nil},
		{"custom resource owning nothing", target("Pool", "example.com", "pools", "x"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ownedNames(w, tt.target)); diff != "" {
				t.Errorf("owned (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIntermediates: a deleted ReplicaSet's pods stay its Deployment's
// until they are gone; then, and for one deleted with no pods, nothing of
// it is kept. A ReplicaSet adopted by another controller moves to it.
func TestIntermediates(t *testing.T) {
	w := newCacheWatcher()
	d := target("Deployment", "apps", "deployments", "d")
	rs1 := &appsv1.ReplicaSet{ObjectMeta: objMeta("rs1", "d")}
	w.intermediateChanged(rs1)
	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs2", "d")})
	p1 := addPod(t, w, "p1", "rs1")

	w.intermediateDeleted(cache.DeletedFinalStateUnknown{Key: "ns/rs1", Obj: rs1})
	if diff := cmp.Diff([]string{"p1"}, ownedNames(w, d)); diff != "" {
		t.Errorf("after its ReplicaSet is deleted, the Deployment's pods (-want +got):\n%s", diff)
	}
	if err := w.pods.Delete(p1); err != nil {
		t.Fatal(err)
	}
	w.podDeleted(p1)
	w.intermediateDeleted(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs2", "d")})
	if len(w.parent) != 0 || len(w.children) != 0 || w.gone.Len() != 0 {
		t.Errorf("kept after the ReplicaSets and their pods are gone: parents %v, children %v, gone %v", w.parent, w.children, w.gone)
	}

	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs3", "d")})
	addPod(t, w, "p3", "rs3")
	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs3", "e")})
	if got := ownedNames(w, d); len(got) != 0 {
		t.Errorf("the Deployment still owns %v after its ReplicaSet moved", got)
	}
	if diff := cmp.Diff([]string{"p3"}, ownedNames(w, target("Deployment", "apps", "deployments", "e"))); diff != "" {
		t.Errorf("the adopting Deployment's pods (-want +got):\n%s", diff)
	}
}
