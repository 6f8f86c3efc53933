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

package controller

import (
	"slices"
	"sync"
)

// superseded remembers, per node, the resourceVersions the controller's own
// writes replaced. Until the informer shows the last write, its copy is one
// of them, and a sync from it would only lose a conflict: it is skipped,
// and the watch event of the write syncs the node again.
type superseded struct {
	mu  sync.Mutex
	rvs map[string][]string
}

// add records that a write replaced node name at resourceVersion rv.
func (s *superseded) add(name, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rvs[name] = append(s.rvs[name], rv)
}

// stale reports whether rv is one the controller's writes replaced; any
// other resourceVersion means the informer caught up, and the record goes.
func (s *superseded) stale(name, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.rvs[name], rv) {
		return true
	}
	delete(s.rvs, name)
	return false
}

// forget drops a deleted node's record.
func (s *superseded) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rvs, name)
}
