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
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// controllerIndex indexes pods by the UID of their controller.
const controllerIndex = "controller"

var (
	podsResource        = corev1.SchemeGroupVersion.WithResource("pods")
	replicaSetsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	jobsResource        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// Watcher keeps, through informers, the pods of the cluster, the
// intermediate owners between a workload and its pods (ReplicaSets, Jobs)
// and the objects waited for. Its caches are read-only: callers must not
// change the pods it hands out.
type Watcher struct {
	alive func() error
	// aliveEvery and debounce are how often alive is asked, and how long
	// events are gathered before an evaluation.
	aliveEvery, debounce time.Duration
	// readers is how many reads of targets (see fresh.go) run at once.
	readers int

	cancel     context.CancelFunc
	metaClient metadata.Interface
	factory    informers.SharedInformerFactory
	dynFactory dynamicinformer.DynamicSharedInformerFactory
	stores     map[schema.GroupVersionResource]cache.Store
	pods       cache.Indexer

	// subMu guards subscribers, the Waits to wake on an event, apart from
	// mu: event handlers do not wait for an evaluation to end.
	subMu       sync.Mutex
	subscribers map[chan struct{}]struct{}

	mu sync.Mutex
	// settled are the targets a Wait has returned for: WaitWritten reads
	// them again only when the caller wrote them since.
	settled map[workload.Target]struct{}
	// ctx lives until Stop; dynamic informers started later run in it.
	ctx context.Context
	// synced are the informers of the targets' resources started so far.
	synced map[schema.GroupVersionResource]dynamicStore
	// parent is the controller of each ReplicaSet and Job seen; children
	// the reverse. Kept after the intermediate is deleted while pods of it
	// are left (see forgetIfEmpty): they still belong to the workload.
	parent   map[types.UID]types.UID
	children map[types.UID]sets.Set[types.UID]
	// gone are the intermediates deleted whose pods are not all gone.
	gone         sets.Set[types.UID]
	lastProgress string
	// evaluations counts the evaluations of Wait, for tests.
	evaluations int
}

// Start starts the informers on pods, ReplicaSets and Jobs of all
// namespaces and returns once they have synced. They run until Stop or
// until ctx ends. alive, when set, says whether the cluster's controllers
// and kubelets still run (see Wait).
func Start(ctx context.Context, cfg *rest.Config, alive func() error) (*Watcher, error) {
	// The built-in kinds speak protobuf, smaller to decode than JSON; the
	// dynamic and metadata clients stay on JSON, which every resource serves.
	typedCfg := rest.CopyConfig(cfg)
	typedCfg.ContentType = runtime.ContentTypeProtobuf
	typedCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(typedCfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	metaClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{
		alive:       alive,
		aliveEvery:  time.Second,
		debounce:    30 * time.Millisecond,
		readers:     8,
		cancel:      cancel,
		metaClient:  metaClient,
		ctx:         ctx,
		factory:     informers.NewSharedInformerFactory(client, 0),
		dynFactory:  dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		synced:      map[schema.GroupVersionResource]dynamicStore{},
		parent:      map[types.UID]types.UID{},
		children:    map[types.UID]sets.Set[types.UID]{},
		gone:        sets.New[types.UID](),
		subscribers: map[chan struct{}]struct{}{},
	}
	pods := w.factory.Core().V1().Pods().Informer()
	rs := w.factory.Apps().V1().ReplicaSets().Informer()
	jobs := w.factory.Batch().V1().Jobs().Informer()
	if err := pods.AddIndexers(cache.Indexers{controllerIndex: indexByController}); err != nil {
		cancel()
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{pods, rs, jobs} {
		if err := inf.SetTransform(dropManagedFields); err != nil {
			cancel()
			return nil, err
		}
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{pods, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.notify() },
			UpdateFunc: func(any, any) { w.notify() },
			DeleteFunc: w.podDeleted,
		}},
		{rs, w.intermediateHandler()},
		{jobs, w.intermediateHandler()},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			cancel()
			return nil, err
		}
	}
	w.pods = pods.GetIndexer()
	w.stores = map[schema.GroupVersionResource]cache.Store{}
	for r, inf := range map[schema.GroupVersionResource]cache.SharedIndexInformer{podsResource: pods, replicaSetsResource: rs, jobsResource: jobs} {
		s, err := versionedStore(inf, w.notify)
		if err != nil {
			cancel()
			return nil, err
		}
		w.stores[r] = s
	}
	if err := startInformers(ctx, w.factory); err != nil {
		w.Stop()
		return nil, fmt.Errorf("syncing the pod, ReplicaSet and Job informers: %w", err)
	}
	return w, nil
}

// Stop stops the informers and waits for them to end.
func (w *Watcher) Stop() {
	w.cancel()
	w.factory.Shutdown()
	w.dynFactory.Shutdown()
}

// dropManagedFields keeps managed fields, which nothing here reads, out of
// the caches: a snapshot's tens of thousands of pods cost less memory.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// notify wakes every Wait.
func (w *Watcher) notify() {
	w.subMu.Lock()
	defer w.subMu.Unlock()
	for ch := range w.subscribers {
		select {
		case ch <- struct{}{}:
		default: // already woken
		}
	}
}

func (w *Watcher) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	w.subMu.Lock()
	defer w.subMu.Unlock()
	w.subscribers[ch] = struct{}{}
	return ch
}

func (w *Watcher) unsubscribe(ch chan struct{}) {
	w.subMu.Lock()
	defer w.subMu.Unlock()
	delete(w.subscribers, ch)
}

// dynamicStore is an informer started for a target's resource, and its
// cache (see versionedStore).
type dynamicStore struct {
	inf   cache.SharedIndexInformer
	store cache.Store
}

// store returns the cache of the objects of r, starting an informer on r
// (of all namespaces) the first time and waiting until it has synced.
func (w *Watcher) store(ctx context.Context, r schema.GroupVersionResource) (cache.Store, error) {
	if s, ok := w.stores[r]; ok {
		return s, nil
	}
	w.mu.Lock()
	d, ok := w.synced[r]
	if !ok {
		klog.FromContext(ctx).V(2).Info("Watching", "resource", r.String())
		d.inf = w.dynFactory.ForResource(r).Informer()
		err := d.inf.SetTransform(dropManagedFields)
		if err == nil {
			_, err = d.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { w.notify() },
				UpdateFunc: func(any, any) { w.notify() },
				DeleteFunc: func(any) { w.notify() },
			})
		}
		if err == nil {
			d.store, err = versionedStore(d.inf, w.notify)
		}
		if err != nil {
			w.mu.Unlock()
			return nil, err
		}
		w.synced[r] = d
		w.dynFactory.Start(w.ctx.Done())
	}
	w.mu.Unlock()
	if !cache.WaitForCacheSync(ctx.Done(), d.inf.HasSynced) {
		return nil, fmt.Errorf("the informer of %s has not synced", r.GroupResource())
	}
	return d.store, nil
}
