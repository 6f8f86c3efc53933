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

package nodeclaims

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// recorder collects the nodes that OnChange reports.
type recorder struct {
	mu    sync.Mutex
	nodes []string
}

func (r *recorder) add(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodes = append(r.nodes, node)
}

// take returns the nodes reported since the last call, sorted.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.nodes
	r.nodes = nil
	slices.Sort(n)
	return n
}

func newTestIndex(t testing.TB) (*Index, *recorder) {
	rec := &recorder{}
	return newIndex(ktesting.NewLogger(t, ktesting.NewConfig()), WithOnChange(rec.add)), rec
}

// wantNode checks the NodeClaim of the node named node, without a
// providerID; wantFound, of n.
func wantNode(t *testing.T, ix *Index, node string, want window.NodeClaim) {
	t.Helper()
	wantFound(t, ix, k8sNode(node, ""), want)
}

func wantFound(t *testing.T, ix *Index, n *v1.Node, want window.NodeClaim) {
	t.Helper()
	got, ok := ix.ForNode(n)
	if !ok || got != want {
		t.Errorf("ForNode(%q, providerID %q) = %+v, %v, want %+v, true", n.Name, n.Spec.ProviderID, got, ok, want)
	}
}

func wantNoNode(t *testing.T, ix *Index, node string) {
	t.Helper()
	wantNotFound(t, ix, k8sNode(node, ""))
}

func wantNotFound(t *testing.T, ix *Index, n *v1.Node) {
	t.Helper()
	if got, ok := ix.ForNode(n); ok {
		t.Errorf("ForNode(%q, providerID %q) = %+v, want none", n.Name, n.Spec.ProviderID, got)
	}
}

// wantEmpty checks that no entry is left behind.
func wantEmpty(t *testing.T, ix *Index) {
	t.Helper()
	if len(ix.byNode)+len(ix.byProvider)+len(ix.byClaim)+len(ix.malformed) != 0 {
		t.Errorf("entries left: byNode %v, byProvider %v, byClaim %v, malformed %v", ix.byNode, ix.byProvider, ix.byClaim, ix.malformed)
	}
}

func wantChanged(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("OnChange nodes = %q, want %q", got, want)
	}
}

func TestIndexEvents(t *testing.T) {
	ix, rec := newTestIndex(t)
	expires := created.Add(720 * time.Hour)

	ix.upsert(claim("nc-a", "node-a", withExpireAfter("720h")))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a", ExpiresAt: expires})
	wantChanged(t, rec, "node-a")

	// A status update that changes nothing we read does not requeue.
	ix.upsert(claim("nc-a", "node-a", withExpireAfter("720h"), withCondition("Drifted", "False")))
	wantChanged(t, rec)

	ix.upsert(claim("nc-a", "node-a", withExpireAfter("720h"), withCondition("Drifted", "True")))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a", ExpiresAt: expires, Drifted: true})
	wantChanged(t, rec, "node-a")

	ix.upsert(claim("nc-a", "node-a", withExpireAfter("720h"), withCondition("Drifted", "True"), withCondition("DisruptionReason", "True")))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a", ExpiresAt: expires, Drifted: true, Disrupting: true})
	wantChanged(t, rec, "node-a")

	ix.upsert(claim("nc-b", "node-b"))
	wantNode(t, ix, "node-b", window.NodeClaim{Name: "nc-b"})
	wantChanged(t, rec, "node-b")

	ix.remove(claim("nc-a", "node-a"))
	wantNoNode(t, ix, "node-a")
	wantNode(t, ix, "node-b", window.NodeClaim{Name: "nc-b"})
	wantChanged(t, rec, "node-a")
	if n := ix.Len(); n != 1 {
		t.Errorf("Len = %d after a delete, want 1", n)
	}
}

func TestIndexNodeNameChanges(t *testing.T) {
	ix, rec := newTestIndex(t)

	// Launched, not registered yet: no node, no entry.
	ix.upsert(claim("nc-a", ""))
	if n := ix.Len(); n != 0 {
		t.Errorf("Len = %d for a NodeClaim without a node", n)
	}
	wantChanged(t, rec)

	ix.upsert(claim("nc-a", "node-1"))
	wantNode(t, ix, "node-1", window.NodeClaim{Name: "nc-a"})
	wantChanged(t, rec, "node-1")

	// The node changes: the old node's entry must go.
	ix.upsert(claim("nc-a", "node-2"))
	wantNoNode(t, ix, "node-1")
	wantNode(t, ix, "node-2", window.NodeClaim{Name: "nc-a"})
	wantChanged(t, rec, "node-1", "node-2")

	// The node name is cleared.
	ix.upsert(claim("nc-a", ""))
	wantNoNode(t, ix, "node-2")
	wantChanged(t, rec, "node-2")
	wantEmpty(t, ix)
}

func TestIndexTombstones(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  any
	}{
		{name: "with the last object", obj: claim("nc-a", "node-a")},
		// The last state seen may be older than the index's: the node comes
		// from the index, not from the tombstone's object.
		{name: "with a stale object", obj: claim("nc-a", "node-old")},
		{name: "without an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, rec := newTestIndex(t)
			ix.upsert(claim("nc-a", "node-a", withProviderID("kwok://a")))
			ix.upsert(claim("nc-b", "node-b", withProviderID("kwok://b")))
			rec.take()
			ix.remove(cache.DeletedFinalStateUnknown{Key: "nc-a", Obj: tc.obj})
			wantNotFound(t, ix, k8sNode("node-a", "kwok://a"))
			wantFound(t, ix, k8sNode("node-b", "kwok://b"), window.NodeClaim{Name: "nc-b"})
			wantChanged(t, rec, "node-a")
			if len(ix.byProvider) != 1 {
				t.Errorf("byProvider = %v, want only kwok://b", ix.byProvider)
			}
		})
	}
}

func TestIndexIgnoresOtherObjects(t *testing.T) {
	ix, rec := newTestIndex(t)
	ix.upsert("not a NodeClaim")
	ix.remove(42)
	if ix.Len() != 0 {
		t.Errorf("Len = %d", ix.Len())
	}
	wantChanged(t, rec)
}

// Should two NodeClaims ever name one node, deleting the one that lost the
// entry must not remove the other's.
func TestIndexTwoClaimsOneNode(t *testing.T) {
	ix, _ := newTestIndex(t)
	ix.upsert(claim("nc-old", "node-a"))
	ix.upsert(claim("nc-new", "node-a", withCondition("Drifted", "True")))
	ix.remove(claim("nc-old", "node-a"))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-new", Drifted: true})
	ix.remove(claim("nc-new", "node-a"))
	wantNoNode(t, ix, "node-a")
	wantEmpty(t, ix)
}

func TestIndexMalformedExpiryLoggedOnce(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(2)))
	ix := newIndex(logger)
	logged := func() int {
		return strings.Count(logger.GetSink().(ktesting.Underlier).GetBuffer().String(), "Ignoring the NodeClaim's expireAfter")
	}

	for range 3 { // status updates repeat the same spec
		ix.upsert(claim("nc-a", "node-a", withExpireAfter("soon")))
	}
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a"})
	if n := logged(); n != 1 {
		t.Errorf("logged %d times for one NodeClaim and value, want 1", n)
	}
	ix.upsert(claim("nc-a", "node-a", withExpireAfter("later")))
	if n := logged(); n != 2 {
		t.Errorf("logged %d times after a new value, want 2", n)
	}
	ix.upsert(claim("nc-b", "node-b", withExpireAfter("later")))
	if n := logged(); n != 3 {
		t.Errorf("logged %d times after another NodeClaim, want 3", n)
	}
	ix.upsert(claim("nc-a", "node-a", withExpireAfter("1h")))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a", ExpiresAt: created.Add(time.Hour)})
	ix.remove(claim("nc-b", "node-b"))
	if len(ix.malformed) != 0 {
		t.Errorf("malformed values kept for fixed or deleted NodeClaims: %v", ix.malformed)
	}
}

// Filter reads from many goroutines while the informer writes; run with -race.
func TestIndexParallelLookups(t *testing.T) {
	ix, _ := newTestIndex(t)
	nodeA, nodeB := k8sNode("node-a", "kwok://a"), k8sNode("node-b", "kwok://b")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if nc, ok := ix.ForNode(nodeA); ok && nc.Name != "nc-a" {
					t.Errorf("ForNode = %+v", nc)
					return
				}
				ix.ForNode(nodeB)
			}
		})
	}
	for i := range 2000 {
		drift := "False"
		if i%2 == 0 {
			drift = "True"
		}
		node := "node-a"
		if i%4 == 0 { // launched, not registered yet
			node = ""
		}
		ix.upsert(claim("nc-a", node, withProviderID("kwok://a"), withCondition("Drifted", drift)))
		if i%3 == 0 {
			ix.remove(claim("nc-a", "node-a"))
		}
	}
	close(stop)
	wg.Wait()
}
