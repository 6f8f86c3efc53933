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
	"testing"
	"time"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// Karpenter sets status.providerID at launch and status.nodeName only when
// the node registers: in between, the Node (its spec.providerID the same
// string) must still find its NodeClaim.
func TestIndexByProviderID(t *testing.T) {
	ix, rec := newTestIndex(t)
	ix.upsert(claim("nc-a", "", withProviderID("kwok://a"), withCondition("Drifted", "True")))
	wantFound(t, ix, k8sNode("node-a", "kwok://a"), window.NodeClaim{Name: "nc-a", Drifted: true})
	wantNotFound(t, ix, k8sNode("node-a", ""))
	wantNotFound(t, ix, k8sNode("node-a", "kwok://other"))
	// No node name to requeue: the node's own event comes.
	wantChanged(t, rec)
	if n := ix.Len(); n != 0 {
		t.Errorf("Len = %d, want 0: no node has a NodeClaim by name", n)
	}

	// The node registers: found by name, and requeued.
	ix.upsert(claim("nc-a", "node-a", withProviderID("kwok://a")))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a"})
	wantFound(t, ix, k8sNode("node-a", "kwok://a"), window.NodeClaim{Name: "nc-a"})
	wantChanged(t, rec, "node-a")

	ix.remove(claim("nc-a", "node-a"))
	wantNotFound(t, ix, k8sNode("node-a", "kwok://a"))
	wantEmpty(t, ix)
}

// The name decides when both would find a NodeClaim.
func TestIndexNameBeforeProviderID(t *testing.T) {
	ix, _ := newTestIndex(t)
	ix.upsert(claim("nc-named", "node-a", withProviderID("kwok://a")))
	ix.upsert(claim("nc-launching", "", withProviderID("kwok://b"), withCondition("Drifted", "True")))
	wantFound(t, ix, k8sNode("node-a", "kwok://b"), window.NodeClaim{Name: "nc-named"})
	wantFound(t, ix, k8sNode("node-b", "kwok://b"), window.NodeClaim{Name: "nc-launching", Drifted: true})
}

func TestIndexProviderIDChanges(t *testing.T) {
	ix, rec := newTestIndex(t)
	ix.upsert(claim("nc-a", "", withProviderID("kwok://1")))
	ix.upsert(claim("nc-a", "", withProviderID("kwok://2")))
	wantNotFound(t, ix, k8sNode("node-a", "kwok://1"))
	wantFound(t, ix, k8sNode("node-a", "kwok://2"), window.NodeClaim{Name: "nc-a"})

	// A change of what the NodeClaim plans reaches the entry too.
	ix.upsert(claim("nc-a", "", withProviderID("kwok://2"), withExpireAfter("1h")))
	wantFound(t, ix, k8sNode("node-a", "kwok://2"), window.NodeClaim{Name: "nc-a", ExpiresAt: created.Add(time.Hour)})

	// The providerID is cleared (or was never set): no entry left.
	ix.upsert(claim("nc-a", ""))
	wantNotFound(t, ix, k8sNode("node-a", "kwok://2"))
	wantEmpty(t, ix)

	// Keyed by both, the providerID removed: the name still finds it.
	ix.upsert(claim("nc-a", "node-a", withProviderID("kwok://3")))
	ix.upsert(claim("nc-a", "node-a"))
	wantNotFound(t, ix, k8sNode("node-x", "kwok://3"))
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a"})
	if len(ix.byProvider) != 0 {
		t.Errorf("byProvider = %v after the providerID was removed", ix.byProvider)
	}
	wantChanged(t, rec, "node-a")
}

// Should two NodeClaims ever have one providerID, deleting the one that
// lost the entry must not remove the other's.
func TestIndexTwoClaimsOneProviderID(t *testing.T) {
	ix, _ := newTestIndex(t)
	n := k8sNode("node-a", "kwok://a")
	ix.upsert(claim("nc-old", "", withProviderID("kwok://a")))
	ix.upsert(claim("nc-new", "", withProviderID("kwok://a"), withCondition("Drifted", "True")))
	ix.remove(claim("nc-old", ""))
	wantFound(t, ix, n, window.NodeClaim{Name: "nc-new", Drifted: true})
	ix.remove(claim("nc-new", ""))
	wantNotFound(t, ix, n)
	wantEmpty(t, ix)
}
