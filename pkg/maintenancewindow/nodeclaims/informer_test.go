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
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

func fakeClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{GVR: "NodeClaimList"}, objs...)
}

// eventually polls until cond holds or fails the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestNewIndexFollowsTheAPI runs the informer against the fake API: the
// initial list, then creates, updates and deletes.
func TestNewIndexFollowsTheAPI(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fakeClient(claim("nc-a", "node-a", withExpireAfter("720h"), withCondition("Drifted", "True")))
	rec := &recorder{}
	ix := NewIndex(ctx, client, WithOnChange(rec.add))
	eventually(t, "the initial list", ix.HasSynced)
	wantNode(t, ix, "node-a", window.NodeClaim{Name: "nc-a", ExpiresAt: created.Add(720 * time.Hour), Drifted: true})
	wantChanged(t, rec, "node-a")
	// The fake client loses events sent between the list and the watch.
	eventually(t, "the watch", func() bool {
		return slices.ContainsFunc(client.Actions(), func(a clienttesting.Action) bool { return a.GetVerb() == "watch" })
	})

	nodeClaims := client.Resource(GVR)
	if _, err := nodeClaims.Create(ctx, claim("nc-b", "", withProviderID("kwok://b")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodeB := k8sNode("node-b", "kwok://b")
	eventually(t, "node-b's NodeClaim by providerID", func() bool { _, ok := ix.ForNode(nodeB); return ok })
	wantNoNode(t, ix, "node-b")
	if _, err := nodeClaims.UpdateStatus(ctx, claim("nc-b", "node-b", withCondition("DisruptionReason", "True")), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-b's NodeClaim", func() bool { _, ok := ix.ForNode(k8sNode("node-b", "")); return ok })
	wantNode(t, ix, "node-b", window.NodeClaim{Name: "nc-b", Disrupting: true})

	if err := nodeClaims.Delete(ctx, "nc-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-a's NodeClaim to go", func() bool { _, ok := ix.ForNode(k8sNode("node-a", "")); return !ok })
	if n := ix.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
	eventually(t, "OnChange", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.nodes) == 2
	})
	wantChanged(t, rec, "node-a", "node-b")
}

func TestNewIndexDropsManagedFields(t *testing.T) {
	u := claim("nc-a", "node-a")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "karpenter"}})
	out, err := dropManagedFields(u)
	if err != nil || out.(*unstructured.Unstructured).GetManagedFields() != nil {
		t.Errorf("dropManagedFields = %v, %v", out, err)
	}
	if out, err := dropManagedFields("x"); out != "x" || err != nil {
		t.Errorf("dropManagedFields(other) = %v, %v", out, err)
	}
}

func TestServed(t *testing.T) {
	nodeClaims := &metav1.APIResourceList{GroupVersion: "karpenter.sh/v1", APIResources: []metav1.APIResource{
		{Name: "nodeclaims", Kind: "NodeClaim"}, {Name: "nodeclaims/status"}, {Name: "nodepools", Kind: "NodePool"},
	}}
	onlyPools := &metav1.APIResourceList{GroupVersion: "karpenter.sh/v1", APIResources: []metav1.APIResource{{Name: "nodepools"}}}
	beta := &metav1.APIResourceList{GroupVersion: "karpenter.sh/v1beta1", APIResources: []metav1.APIResource{{Name: "nodeclaims"}}}
	boom := errors.New("connection refused")
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		err       error
		want      bool
	}{
		{name: "served", resources: []*metav1.APIResourceList{beta, nodeClaims}, want: true},
		{name: "no Karpenter"},
		{name: "only v1beta1", resources: []*metav1.APIResourceList{beta}},
		{name: "group without nodeclaims", resources: []*metav1.APIResourceList{onlyPools}},
		{name: "discovery fails", resources: []*metav1.APIResourceList{nodeClaims}, err: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.resources}}
			if tc.err != nil {
				disc.AddReactor("*", "*", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			}
			got, err := Served(disc)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("Served = %v, %v, want %v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
