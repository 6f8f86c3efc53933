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
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/testutil"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// TestConflictRetried: a write that loses a race (another writer's
// resourceVersion) is retried through the rate limiter and then lands, on
// top of the other writer's change.
func TestConflictRetried(t *testing.T) {
	RegisterMetrics()
	before, _ := testutil.GetCounterMetricValue(writeErrors.WithLabelValues("taint", "conflict"))
	h := newHarness(t, newNode("n1", interval(-time.Hour, time.Hour)))
	raced := func(clienttesting.Action) error {
		// Another writer came first: its change bumped the resourceVersion.
		n := h.node("n1").DeepCopy()
		n.Labels = map[string]string{"other": "writer"}
		n.ResourceVersion = strconv.FormatInt(h.rv.Add(1), 10)
		if err := h.client.Tracker().Update(nodesGVR, n, ""); err != nil {
			t.Error(err)
		}
		return apierrors.NewConflict(nodesGVR.GroupResource(), "n1", nil)
	}
	h.failNext.Store(&raced)
	h.start(defaultArgs(t))
	n := h.waitNode("n1", "tainted after the conflict", hasOurTaint)
	if n.Labels["other"] != "writer" {
		t.Errorf("the other writer's change was lost: %v", n.Labels)
	}
	if h.limiter.asked.Load() == 0 {
		t.Error("the conflict was not retried through the rate limiter")
	}
	after, _ := testutil.GetCounterMetricValue(writeErrors.WithLabelValues("taint", "conflict"))
	// At least the injected one: the retry may still read the cache from
	// before the other writer's change, and lose again.
	if after-before < 1 {
		t.Errorf("write_errors_total{taint,conflict} rose by %v, want at least 1", after-before)
	}
}

// TestNodeDeletedMidWork: a node deleted between the cache and the write
// (NotFound) ends its sync without an error, so nothing retries it.
func TestNodeDeletedMidWork(t *testing.T) {
	h := newHarness(t, newNode("n1", interval(-time.Hour, time.Hour)))
	gone := func(clienttesting.Action) error {
		if err := h.client.Tracker().Delete(nodesGVR, "", "n1"); err != nil {
			t.Error(err)
		}
		return apierrors.NewNotFound(nodesGVR.GroupResource(), "n1")
	}
	h.failNext.Store(&gone)
	h.start(defaultArgs(t))
	h.waitFor("the sync", func() bool { return len(h.synced()) > 0 })
	time.Sleep(100 * time.Millisecond)
	for _, s := range h.synced() {
		if s.err != nil {
			t.Errorf("sync of %s: %v", s.name, s.err)
		}
	}
	if n := h.limiter.asked.Load(); n != 0 {
		t.Errorf("%d retries of a deleted node", n)
	}
}

// fakeClaims is a map-backed window.NodeClaims.
type fakeClaims map[string]window.NodeClaim

// ForNode finds a claim by the node's name, then by "providerID:" and its
// spec.providerID, as nodeclaims.Index does.
func (f fakeClaims) ForNode(n *v1.Node) (window.NodeClaim, bool) {
	if nc, ok := f[n.Name]; ok {
		return nc, true
	}
	nc, ok := f["providerID:"+n.Spec.ProviderID]
	return nc, ok && n.Spec.ProviderID != ""
}

// TestKarpenter: drift and disruption plan maintenance (no taint); an
// expiry is a window that opens then and has no end.
func TestKarpenter(t *testing.T) {
	claims := fakeClaims{
		"drifted":    {Name: "nc-1", Drifted: true},
		"disrupting": {Name: "nc-2", Drifted: true, Disrupting: true},
		"expired":    {Name: "nc-3", ExpiresAt: t0.Add(-time.Minute)},
		"expiring":   {Name: "nc-4", ExpiresAt: t0.Add(time.Hour)},
	}
	h := newHarness(t, newNode("drifted", ""), newNode("disrupting", ""), newNode("expired", ""), newNode("expiring", ""))
	c := h.start(defaultArgs(t), WithNodeClaims(claims))
	h.settle(c, "drifted", "disrupting", "expired", "expiring")
	for name, want := range map[string]string{"drifted": ReasonDrifted, "disrupting": ReasonDisrupting, "expiring": ReasonPlanned} {
		n := h.node(name)
		if c := condition(n, ConditionMaintenancePlanned); c == nil || c.Reason != want {
			t.Errorf("%s: MaintenancePlanned %+v, want reason %s", name, c, want)
		}
		if hasOurTaint(n) {
			t.Errorf("%s: tainted before its window", name)
		}
	}
	n := h.node("expired")
	c2 := condition(n, ConditionMaintenanceInProgress)
	if !hasOurTaint(n) || c2 == nil || !strings.Contains(c2.Message, "with no known end (expiry of Karpenter NodeClaim nc-3)") {
		t.Errorf("expired NodeClaim's node: taints %+v, MaintenanceInProgress %+v", n.Spec.Taints, c2)
	}
	h.step(time.Hour)
	h.waitNode("expiring", "tainted at the expiry", hasOurTaint)
}

// TestKarpenterByProviderID: a NodeClaim Karpenter has not yet tied to
// its node by name is found by the node's providerID.
func TestKarpenterByProviderID(t *testing.T) {
	claims := fakeClaims{"providerID:kwok://young": {Name: "nc-5", Drifted: true}}
	young := newNode("young", "")
	young.Spec.ProviderID = "kwok://young"
	h := newHarness(t, young)
	c := h.start(defaultArgs(t), WithNodeClaims(claims))
	h.settle(c, "young")
	if got := condition(h.node("young"), ConditionMaintenancePlanned); got == nil || got.Reason != ReasonDrifted {
		t.Errorf("MaintenancePlanned %+v, want reason %s", got, ReasonDrifted)
	}
}
