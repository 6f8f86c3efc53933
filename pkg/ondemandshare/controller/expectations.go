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
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// expectations remember the slots this controller wrote and the informer
// does not show yet (the ControllerExpectations pattern of
// k8s.io/kubernetes pkg/controller, reduced to what slots need). A sync
// counts them as taken and leaves their pods alone, so a stale cache never
// hands one slot to two pods nor decides a pod twice.
type expectations struct {
	mu sync.Mutex
	m  map[Key]map[types.UID]expected
}

type expected struct {
	space types.UID
	slot  int32
}

func newExpectations() *expectations {
	return &expectations{m: map[Key]map[types.UID]expected{}}
}

// expect records that pod uid of key is being written into slot.
func (e *expectations) expect(key Key, uid, space types.UID, slot int32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m[key] == nil {
		e.m[key] = map[types.UID]expected{}
	}
	e.m[key][uid] = expected{space: space, slot: slot}
}

// drop forgets uid: its write failed.
func (e *expectations) drop(key Key, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m[key], uid)
	if len(e.m[key]) == 0 {
		delete(e.m, key)
	}
}

// has reports whether uid's decision is written but not seen yet.
func (e *expectations) has(key Key, uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.m[key][uid]
	return ok
}

// taken adds the pending slots of space to slots.
func (e *expectations) taken(key Key, space types.UID, slots map[int32]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, x := range e.m[key] {
		if x.space == space {
			slots[x.slot] = true
		}
	}
}

// observe keeps only the expectations that are still unmet: pending reports
// whether the cache still shows uid undecided and holding a slot. A pod the
// cache no longer has was deleted: it was cached when it was decided.
func (e *expectations) observe(key Key, pending func(uid types.UID) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for uid := range e.m[key] {
		if !pending(uid) {
			delete(e.m[key], uid)
		}
	}
	if len(e.m[key]) == 0 {
		delete(e.m, key)
	}
}

// len is the number of unmet expectations, for tests and the hook.
func (e *expectations) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, m := range e.m {
		n += len(m)
	}
	return n
}
