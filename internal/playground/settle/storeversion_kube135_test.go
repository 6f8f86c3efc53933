//go:build kube1.35

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
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func configMap(rv int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "cm", ResourceVersion: strconv.Itoa(rv)}}
}

// laggingInformer is an informer whose reflector has read events its cache
// has not applied yet: LastSyncResourceVersion is ahead of the store.
type laggingInformer struct {
	cache.SharedIndexInformer // nil: what the test does not expect panics
	store                     cache.Store
	handler                   cache.ResourceEventHandler
}

func (i *laggingInformer) GetStore() cache.Store           { return i.store }
func (i *laggingInformer) LastSyncResourceVersion() string { return "9" }
func (i *laggingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	i.handler = h
	return nil, nil
}

// TestStoreVersionNotAhead: the version is what the cache was handed, not
// the reflector's, which runs ahead of the cache, nor older objects'.
func TestStoreVersionNotAhead(t *testing.T) {
	inf := &laggingInformer{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	changes := 0
	s, err := versionedStore(inf, func() { changes++ })
	if err != nil {
		t.Fatal(err)
	}
	step := func(what, want string) {
		t.Helper()
		if got := storeVersion(s); got != want {
			t.Errorf("%s: version %q, want %q", what, got, want)
		}
	}
	step("nothing handed out", "")
	if err := inf.store.Add(configMap(5)); err != nil {
		t.Fatal(err)
	}
	inf.handler.OnAdd(configMap(5), false)
	step("5 in the cache, 9 in the reflector", "5")
	inf.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/old", Obj: configMap(3)})
	step("an older tombstone", "5")
	if err := inf.store.Update(configMap(9)); err != nil {
		t.Fatal(err)
	}
	inf.handler.OnUpdate(configMap(5), configMap(9))
	step("9 in the cache", "9")
	if changes != 3 {
		t.Errorf("changed called %d times for 3 events, want each: a Wait evaluates again once the version moved", changes)
	}
	if got := storeVersion(cache.NewStore(cache.MetaNamespaceKeyFunc)); got != "" {
		t.Errorf("a plain store: version %q, want none", got)
	}
}

// noWatchList makes the reflector list then watch, as a fake has no
// watch-list stream.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// TestStoreVersionBehindCache: on a running informer, whenever the version
// is read before the object, the object is at least that new. It would
// fail, most runs, on a version ahead of the cache, the reflector's.
func TestStoreVersionBehindCache(t *testing.T) {
	const last = 2000
	events := watch.NewFake()
	lw := noWatchList{&cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.ConfigMap{*configMap(1)}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return events, nil },
	}}
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	s, err := versionedStore(inf, func() {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer has not synced")
	}
	go func() {
		for rv := 2; rv <= last; rv++ {
			events.Modify(configMap(rv))
		}
	}()
	for ctx.Err() == nil {
		v := storeVersion(s)
		item, ok, err := s.GetByKey("ns/cm")
		if err != nil || !ok {
			t.Fatalf("the cache lost the object: %v", err)
		}
		if got := item.(*corev1.ConfigMap).ResourceVersion; !atLeast(got, v) {
			t.Fatalf("version %s, but the cache holds the object at %s", v, got)
		}
		if v == strconv.Itoa(last) {
			return
		}
	}
	t.Fatalf("the version did not reach %d: %v", last, ctx.Err())
}
