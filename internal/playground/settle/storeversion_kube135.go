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
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// This file bridges cache.Store.LastStoreSyncResourceVersion, which exists
// since 1.36. On 1.35 a store's version is the highest resource version of
// the objects its informer has handed to an event handler: the informer
// changes its cache before it notifies, so the cache holds every change up
// to it. (The informer's LastSyncResourceVersion is its reflector's, which
// runs ahead of the cache.) It lags 1.36's version, having no bookmarks,
// which only makes a Wait judge a target later.

// handledStore is an informer's cache with the version it has handed out.
type handledStore struct {
	cache.Store
	mu sync.Mutex
	rv string
}

// versionedStore is inf's cache, for storeVersion. changed is called
// after the version moved: an evaluation woken by another handler may
// have run before it.
func versionedStore(inf cache.SharedIndexInformer, changed func()) (cache.Store, error) {
	s := &handledStore{Store: inf.GetStore()}
	handle := func(obj any) {
		s.handled(obj)
		changed()
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
		DeleteFunc: handle,
	})
	return s, err
}

func (s *handledStore) handled(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetResourceVersion() == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The highest; of versions that are not numbers, the last: the
	// cache has held each version it was handed.
	if !atLeast(s.rv, m.GetResourceVersion()) {
		s.rv = m.GetResourceVersion()
	}
}

// storeVersion is the resource version s has caught up with: s holds every
// change up to it. A store not from versionedStore has none.
func storeVersion(s cache.Store) string {
	h, ok := s.(*handledStore)
	if !ok {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rv
}
