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

// Package podcount keeps, per node, the set of pods a plugin counts, so that a
// score can read a node's count in O(1) instead of scanning the node's pods.
//
// Invariant: a pod (by UID) is recorded on at most one node, its effective
// node, which is the node the API server says it is bound to, or else the node
// the scheduler reserved it on. For every node n, nodes[n] holds exactly the
// UIDs whose effective node is n, so Count(n) is the number of distinct
// counted pods bound or reserved there. Every operation keeps this invariant,
// whatever order events arrive in, and repeating an operation changes nothing.
package podcount

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// record says why a pod is counted. Either field may be empty; a record with
// both empty is deleted.
type record struct {
	// boundTo is the node the informer last reported the pod bound to.
	boundTo string
	// reservedOn is the node the scheduler reserved the pod on and has not
	// unreserved yet.
	reservedOn string
}

// node returns the effective node: the API server's binding wins over a
// reservation, because it is the truth that a reservation only anticipates.
func (r record) node() string {
	if r.boundTo != "" {
		return r.boundTo
	}
	return r.reservedOn
}

// Cache is safe for concurrent use. The zero value is not usable: call New.
type Cache struct {
	mu    sync.RWMutex
	pods  map[types.UID]record
	nodes map[string]map[types.UID]struct{}
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{
		pods:  make(map[types.UID]record),
		nodes: make(map[string]map[types.UID]struct{}),
	}
}

// Count returns how many counted pods are bound or reserved on nodeName.
// It does not allocate.
func (c *Cache) Count(nodeName string) int {
	c.mu.RLock()
	n := len(c.nodes[nodeName])
	c.mu.RUnlock()
	return n
}

// Reserve records that the scheduler assumed pod uid on nodeName.
func (c *Cache) Reserve(uid types.UID, nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.pods[uid]
	r.reservedOn = nodeName
	c.set(uid, r)
}

// Unreserve drops the reservation of pod uid on nodeName. It is a no-op when
// the pod was not reserved there, and it keeps a pod the informer has seen
// bound: the binding, not the reservation, is then what counts it.
func (c *Cache) Unreserve(uid types.UID, nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.pods[uid]
	if !ok || r.reservedOn != nodeName {
		return
	}
	r.reservedOn = ""
	c.set(uid, r)
}

// Bind records that the API server reports pod uid bound to nodeName.
func (c *Cache) Bind(uid types.UID, nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.pods[uid]
	r.boundTo = nodeName
	c.set(uid, r)
}

// Forget removes pod uid wherever it is recorded: the pod was deleted, ended,
// or no longer matches what is counted.
func (c *Cache) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(uid, record{})
}

// ForgetNode drops every binding and reservation on nodeName. A pod that was
// both bound elsewhere and reserved here keeps its binding. It visits every
// recorded pod, which is fine for an event as rare as a node deletion.
func (c *Cache) ForgetNode(nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, r := range c.pods {
		if r.boundTo != nodeName && r.reservedOn != nodeName {
			continue
		}
		if r.boundTo == nodeName {
			r.boundTo = ""
		}
		if r.reservedOn == nodeName {
			r.reservedOn = ""
		}
		c.set(uid, r)
	}
}

// Len returns how many pods are recorded, on all nodes.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// set stores r as the record of uid and moves uid between node sets when its
// effective node changes. The caller holds c.mu for writing.
func (c *Cache) set(uid types.UID, r record) {
	old := c.pods[uid].node()
	now := r.node()
	if now == "" {
		delete(c.pods, uid)
	} else {
		c.pods[uid] = r
	}
	if old == now {
		return
	}
	if old != "" {
		set := c.nodes[old]
		delete(set, uid)
		if len(set) == 0 {
			delete(c.nodes, old)
		}
	}
	if now != "" {
		set, ok := c.nodes[now]
		if !ok {
			set = make(map[types.UID]struct{})
			c.nodes[now] = set
		}
		set[uid] = struct{}{}
	}
}
