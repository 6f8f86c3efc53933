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

// Package nodeclaims keeps an index of Karpenter NodeClaims by node name and
// by provider ID, so that MaintenanceWindow can read a node's expiry, drift
// and disruption in Filter without a request or an allocation. It reads
// NodeClaims with the dynamic client: the module does not depend on Karpenter.
package nodeclaims

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

var _ window.NodeClaims = (*Index)(nil)

// Index maps node names and provider IDs to their NodeClaims, kept by an
// informer. It holds one entry per NodeClaim that has a node and one per
// NodeClaim that has a provider ID, so it is bounded by the NodeClaims that
// exist. Lookups take a read lock and copy a small struct: Filter calls them
// for every node in every cycle.
type Index struct {
	logger    klog.Logger
	onChange  []func(nodeName string)
	hasSynced func() bool

	mu sync.RWMutex
	// byNode is what lookups read first.
	byNode map[string]window.NodeClaim
	// byProvider is read when byNode has no entry: Karpenter sets a
	// NodeClaim's status.providerID at launch but its status.nodeName only
	// once the node registers, and a pod may be bound in between.
	byProvider map[string]window.NodeClaim
	// byClaim remembers each NodeClaim's keys, so that a NodeClaim whose
	// keys change, or a tombstone without its object, leaves no entry behind.
	byClaim map[string]keys
	// malformed holds the expireAfter error last logged per NodeClaim, so
	// that status updates (frequent) do not log it again.
	malformed map[string]string
}

// Option configures an Index.
type Option func(*Index)

// WithOnChange calls f with a node's name whenever what ForNode returns for
// it by name changes (added, changed or removed), so that a controller can
// requeue the node. A NodeClaim known only by its provider ID names no node
// to requeue: f is not called for it, and need not be, since setting the
// node name later calls f, as does the node's own event. f runs on the
// informer's goroutine and must not block. Given to NewIndex, it is in
// place before the first event.
func WithOnChange(f func(nodeName string)) Option {
	return func(ix *Index) { ix.onChange = append(ix.onChange, f) }
}

// NewIndex starts an informer on NodeClaims that stops with ctx. Check
// Served first: on a cluster without Karpenter the informer would retry
// forever. Lookups answer "no NodeClaim" until HasSynced.
func NewIndex(ctx context.Context, client dynamic.Interface, opts ...Option) *Index {
	ix := newIndex(klog.FromContext(ctx).WithName("nodeclaims"), opts...)
	// Resync 0: a resync would only convert unchanged objects again.
	informer := dynamicinformer.NewFilteredDynamicInformer(client, GVR, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	// The informer's store keeps every object; managed fields are most of
	// a NodeClaim's size and nothing here reads them.
	if err := informer.SetTransform(dropManagedFields); err != nil {
		ix.logger.Error(err, "Keeping NodeClaims' managed fields")
	}
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    ix.upsert,
		UpdateFunc: func(_, obj any) { ix.upsert(obj) },
		DeleteFunc: ix.remove,
	})
	if err != nil {
		// Only a stopped informer refuses a handler; this one has not run.
		ix.logger.Error(err, "Watching NodeClaims")
		return ix
	}
	ix.hasSynced = reg.HasSynced
	go informer.Run(ctx.Done())
	return ix
}

func newIndex(logger klog.Logger, opts ...Option) *Index {
	ix := &Index{
		logger:     logger,
		hasSynced:  func() bool { return false },
		byNode:     map[string]window.NodeClaim{},
		byProvider: map[string]window.NodeClaim{},
		byClaim:    map[string]keys{},
		malformed:  map[string]string{},
	}
	for _, o := range opts {
		o(ix)
	}
	return ix
}

// ForNode returns the NodeClaim of the node, if it has one: by the node's
// name, else by its spec.providerID (the NodeClaim's status.providerID).
func (ix *Index) ForNode(node *v1.Node) (window.NodeClaim, bool) {
	ix.mu.RLock()
	nc, ok := ix.byNode[node.Name]
	if !ok && node.Spec.ProviderID != "" {
		nc, ok = ix.byProvider[node.Spec.ProviderID]
	}
	ix.mu.RUnlock()
	return nc, ok
}

// HasSynced reports whether the index holds every NodeClaim of the
// informer's initial list.
func (ix *Index) HasSynced() bool { return ix.hasSynced() }

// Len returns the number of nodes that have a NodeClaim.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byNode)
}

func (ix *Index) upsert(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		ix.logger.Error(nil, "Ignoring an object that is not a NodeClaim", "type", typeName(obj))
		return
	}
	k, nc, badExpiry := convert(u)
	ix.mu.Lock()
	changed := ix.unsetLocked(nc.Name, k)
	if k != (keys{}) {
		ix.byClaim[nc.Name] = k
	}
	if k.node != "" {
		if cur, had := ix.byNode[k.node]; !had || cur != nc {
			ix.byNode[k.node] = nc
			changed = append(changed, k.node)
		}
	}
	if k.provider != "" {
		// Nothing to notify: see WithOnChange.
		ix.byProvider[k.provider] = nc
	}
	logExpiry := ix.noteExpiryLocked(nc.Name, badExpiry)
	ix.mu.Unlock()

	if logExpiry {
		ix.logger.V(2).Info("Ignoring the NodeClaim's expireAfter: it counts as never", "nodeClaim", nc.Name, "node", k.node, "err", badExpiry)
	}
	ix.notify(changed)
}

func (ix *Index) remove(obj any) {
	// A tombstone's key is the NodeClaim's name (cluster-scoped); byClaim
	// knows its keys even when the tombstone's object is stale or missing.
	name := ""
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		name = o.GetName()
	case cache.DeletedFinalStateUnknown:
		name = o.Key
	default:
		ix.logger.Error(nil, "Ignoring the deletion of an object that is not a NodeClaim", "type", typeName(obj))
		return
	}
	ix.mu.Lock()
	changed := ix.unsetLocked(name, keys{})
	delete(ix.malformed, name)
	ix.mu.Unlock()
	ix.notify(changed)
}

// unsetLocked drops the NodeClaim's entries whose key is no longer the one
// in keep, and forgets its keys (upsert records them again). An entry goes
// only if the NodeClaim still owns it: should two NodeClaims ever name one
// node or provider ID, the other's entry stays.
func (ix *Index) unsetLocked(claim string, keep keys) (changed []string) {
	old, had := ix.byClaim[claim]
	if !had {
		return nil
	}
	delete(ix.byClaim, claim)
	if old.node != keep.node && dropOwned(ix.byNode, old.node, claim) {
		changed = []string{old.node}
	}
	if old.provider != keep.provider {
		dropOwned(ix.byProvider, old.provider, claim)
	}
	return changed
}

// dropOwned deletes m[key] if claim owns it, and reports whether it did.
func dropOwned(m map[string]window.NodeClaim, key, claim string) bool {
	if cur, ok := m[key]; ok && cur.Name == claim {
		delete(m, key)
		return true
	}
	return false
}

// noteExpiryLocked reports whether a malformed expireAfter is new for this
// NodeClaim and so worth a log line.
func (ix *Index) noteExpiryLocked(claim string, badExpiry error) bool {
	if badExpiry == nil {
		delete(ix.malformed, claim)
		return false
	}
	msg := badExpiry.Error()
	if ix.malformed[claim] == msg {
		return false
	}
	ix.malformed[claim] = msg
	return true
}

func (ix *Index) notify(nodes []string) {
	for _, n := range nodes {
		for _, f := range ix.onChange {
			f(n)
		}
	}
}

func dropManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
	}
	return obj, nil
}

func typeName(obj any) string {
	return fmt.Sprintf("%T", obj)
}
