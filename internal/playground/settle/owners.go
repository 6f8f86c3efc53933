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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Ownership: a pod belongs to the target its controller owner reference
// leads to, directly or through an intermediate owner (a Deployment's pods
// through its ReplicaSets, a CronJob's through its Jobs).

func indexByController(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if c := metav1.GetControllerOf(pod); c != nil {
		return []string{string(c.UID)}, nil
	}
	return nil, nil
}

// intermediateHandler follows the controllers of ReplicaSets and Jobs.
func (w *Watcher) intermediateHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.intermediateChanged(obj) },
		UpdateFunc: func(_, obj any) { w.intermediateChanged(obj) },
		DeleteFunc: func(obj any) { w.intermediateDeleted(obj) },
	}
}

func (w *Watcher) intermediateChanged(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	w.mu.Lock()
	w.unlink(m.GetUID())
	if c := metav1.GetControllerOfNoCopy(m); c != nil {
		w.parent[m.GetUID()] = c.UID
		if w.children[c.UID] == nil {
			w.children[c.UID] = sets.New[types.UID]()
		}
		w.children[c.UID].Insert(m.GetUID())
	}
	w.mu.Unlock()
	w.notify()
}

func (w *Watcher) intermediateDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	w.mu.Lock()
	w.gone.Insert(m.GetUID())
	w.forgetIfEmpty(m.GetUID())
	w.mu.Unlock()
	w.notify()
}

// podDeleted forgets the pod's intermediate owner once it is gone and
// owns no pod any more: nothing will be attributed through it again.
func (w *Watcher) podDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		if c := metav1.GetControllerOf(pod); c != nil {
			w.mu.Lock()
			w.forgetIfEmpty(c.UID)
			w.mu.Unlock()
		}
	}
	w.notify()
}

// forgetIfEmpty drops a deleted intermediate that owns no pod. w.mu held.
func (w *Watcher) forgetIfEmpty(uid types.UID) {
	if !w.gone.Has(uid) {
		return
	}
	if pods, err := w.pods.ByIndex(controllerIndex, string(uid)); err != nil || len(pods) > 0 {
		return
	}
	w.gone.Delete(uid)
	w.unlink(uid)
}

// unlink drops uid's link to its controller. w.mu held.
func (w *Watcher) unlink(uid types.UID) {
	p, ok := w.parent[uid]
	if !ok {
		return
	}
	delete(w.parent, uid)
	w.children[p].Delete(uid)
	if w.children[p].Len() == 0 {
		delete(w.children, p)
	}
}

// live is t's object in s, nil when gone (or replaced: another UID).
func live(s cache.Store, t workload.Target) runtime.Object {
	key := t.Name
	if t.Namespace != "" {
		key = t.Namespace + "/" + t.Name
	}
	item, ok, err := s.GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	obj, isObj := item.(runtime.Object)
	if !isObj {
		return nil
	}
	if m, err := meta.Accessor(obj); err != nil || m.GetUID() != t.UID {
		return nil
	}
	return obj
}

// owned is the pods t owns, also those being deleted: t itself for a Pod,
// else the pods whose controller is t or an intermediate t controls.
// w.mu held.
func (w *Watcher) owned(t workload.Target) []*corev1.Pod {
	if t.Resource == podsResource {
		if p, ok := live(w.pods, t).(*corev1.Pod); ok {
			return []*corev1.Pod{p}
		}
		return nil
	}
	var pods []*corev1.Pod
	add := func(uid string) {
		items, err := w.pods.ByIndex(controllerIndex, uid)
		if err != nil {
			return // only an unknown index fails
		}
		for _, item := range items {
			if p, ok := item.(*corev1.Pod); ok {
				pods = append(pods, p)
			}
		}
	}
	add(string(t.UID))
	for _, uid := range sets.List(w.children[t.UID]) {
		add(string(uid))
	}
	return pods
}
