//go:build !kube1.35

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

import "k8s.io/client-go/tools/cache"

// This file bridges cache.Store.LastStoreSyncResourceVersion, which exists
// since 1.36: the resource version the store has caught up with.

// versionedStore is inf's cache, for storeVersion; the store's version
// moves with its events, so changed is not needed.
func versionedStore(inf cache.SharedIndexInformer, _ func()) (cache.Store, error) {
	return inf.GetStore(), nil
}

// storeVersion is the resource version s has caught up with: s holds every
// change up to it.
func storeVersion(s cache.Store) string { return s.LastStoreSyncResourceVersion() }
