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

package autoscaler

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
)

// usPreferred is the pools of the residency tests: one per region, the
// cheaper us-east-1 first (weight), as a platform team would send anything
// unconstrained to its cheapest region.
func usPreferred() []karpenter.NodePool {
	eu, us := karpenter.RegionNodePool("eu-west-1"), karpenter.RegionNodePool("us-east-1")
	us.Weight = 10
	return []karpenter.NodePool{eu, us}
}

// nodeSummary is what a residency test checks of a node.
type nodeSummary struct {
	Region, NodePool string
	ZoneInRegion     bool
	Ready            bool // KWOK's doing
	HoldsPod         bool
}

// TestProvisionForRequiredRegion: a pending pod that requires a region gets
// a node Karpenter adds in that region only, which KWOK makes Ready and our
// scheduler binds it to. Without the requirement the same pod gets a node
// of the preferred us-east-1 pool: that is what a pod that only our
// scheduler's PlacementPolicy keeps in the EU gets from an autoscaler.
func TestProvisionForRequiredRegion(t *testing.T) {
	for _, tt := range []struct {
		name       string
		region     string // required region, "" for none
		wantRegion string
	}{
		{name: "required eu-west-1", region: "eu-west-1", wantRegion: "eu-west-1"},
		{name: "no requirement: the preferred pool", wantRegion: "us-east-1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			for _, np := range usPreferred() {
				tc.createNodePool(np)
			}
			tc.startScheduler(defaultProfileConfig())

			pod := tc.makePod("payments", "500m")
			if tt.region != "" {
				requireIn(pod, v1.LabelTopologyRegion, tt.region)
			}
			start := time.Now()
			tc.createPod(pod)
			var claimAt, nodeAt, readyAt, boundAt time.Duration
			var bound *v1.Pod
			tc.poll("the pod to be bound to a node Karpenter adds", provisionTimeout, func(ctx context.Context) (bool, error) {
				if claimAt == 0 && len(tc.nodeClaims()) > 0 {
					claimAt = time.Since(start)
				}
				for _, n := range tc.nodes() {
					if nodeAt == 0 {
						nodeAt = time.Since(start)
					}
					if readyAt == 0 && nodeReady(&n) && !hasTaint(&n, "karpenter.sh/unregistered") {
						readyAt = time.Since(start)
					}
				}
				p, err := client.CoreV1().Pods(tc.ns).Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if p.Spec.NodeName == "" {
					return false, nil
				}
				boundAt, bound = time.Since(start), p
				return true, nil
			})
			t.Logf("pod created -> NodeClaim %s, Node %s, Node Ready and registered %s, pod bound %s",
				claimAt.Round(time.Millisecond), nodeAt.Round(time.Millisecond), readyAt.Round(time.Millisecond), boundAt.Round(time.Millisecond))

			var got []nodeSummary
			for _, n := range tc.nodes() {
				t.Logf("node %s: %s", n.Name, karpenterLabels(n.Labels))
				region := n.Labels[v1.LabelTopologyRegion]
				got = append(got, nodeSummary{
					Region:       region,
					NodePool:     n.Labels[karpenter.NodePoolLabel],
					ZoneInRegion: region != "" && strings.HasPrefix(n.Labels[v1.LabelTopologyZone], region),
					Ready:        nodeReady(&n),
					HoldsPod:     n.Name == bound.Spec.NodeName,
				})
			}
			want := []nodeSummary{{Region: tt.wantRegion, NodePool: "region-" + tt.wantRegion, ZoneInRegion: true, Ready: true, HoldsPod: true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if claims := tc.nodeClaims(); len(claims) != 1 {
				t.Errorf("%d NodeClaims, want 1", len(claims))
			}
		})
	}
}

// TestProvisionForRequiredCapacityType: with a spot pool preferred over an
// on-demand one, a pod that requires on-demand capacity gets an on-demand
// node, and a pod that does not gets a spot one.
func TestProvisionForRequiredCapacityType(t *testing.T) {
	for _, tt := range []struct {
		name     string
		required string // required capacity type, "" for none
		want     string
	}{
		{name: "required on-demand", required: karpenter.CapacityOnDemand, want: karpenter.CapacityOnDemand},
		{name: "no requirement: the preferred spot pool", want: karpenter.CapacitySpot},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestContext(t)
			spot, onDemand := karpenter.CapacityTypeNodePool(karpenter.CapacitySpot), karpenter.CapacityTypeNodePool(karpenter.CapacityOnDemand)
			spot.Weight = 10
			tc.createNodePool(spot)
			tc.createNodePool(onDemand)
			tc.startScheduler(defaultProfileConfig())

			pod := tc.makePod("batch", "500m")
			if tt.required != "" {
				requireIn(pod, karpenter.CapacityTypeLabel, tt.required)
			}
			tc.createPod(pod)
			var node string
			tc.poll("the pod to be bound to a node Karpenter adds", provisionTimeout, func(ctx context.Context) (bool, error) {
				p, err := client.CoreV1().Pods(tc.ns).Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				node = p.Spec.NodeName
				return node != "", nil
			})
			type summary struct {
				CapacityType, NodePool string
				HoldsPod               bool
			}
			var got []summary
			for _, n := range tc.nodes() {
				t.Logf("node %s: %s", n.Name, karpenterLabels(n.Labels))
				got = append(got, summary{n.Labels[karpenter.CapacityTypeLabel], n.Labels[karpenter.NodePoolLabel], n.Name == node})
			}
			want := []summary{{CapacityType: tt.want, NodePool: tt.want, HoldsPod: true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConsolidateEmptyNode: with consolidationPolicy
// WhenEmptyOrUnderutilized and a short consolidateAfter, the node Karpenter
// added for two pods is removed once they are deleted, as an empty node.
func TestConsolidateEmptyNode(t *testing.T) {
	tc := newTestContext(t)
	np := karpenter.RegionNodePool("us-east-1")
	np.ConsolidationPolicy = karpenter.WhenEmptyOrUnderutilized
	np.ConsolidateAfter = 5 * time.Second
	tc.createNodePool(np)
	tc.startScheduler(defaultProfileConfig())

	names := []string{"web-1", "web-2"}
	for _, name := range names {
		tc.createPod(tc.makePod(name, "500m"))
	}
	tc.poll("both pods to be bound", provisionTimeout, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			p, err := client.CoreV1().Pods(tc.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Spec.NodeName == "" {
				return false, err
			}
		}
		return true, nil
	})
	// Karpenter batches pods that go pending together, so one node holds
	// both; under load it could make two. Either way, every NodeClaim is
	// watched from here until it is gone: the reason Karpenter gives for
	// disrupting it (condition DisruptionReason) shows it was consolidation.
	list, err := kp.Client.Resource(karpenter.NodeClaimGVR).List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Logf("Karpenter made %d NodeClaims for two small pods (usually 1)", len(list.Items))
	}
	left := map[string]bool{}
	for _, c := range list.Items {
		left[c.GetName()] = true
	}
	w, err := kp.Client.Resource(karpenter.NodeClaimGVR).Watch(tc.ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watching NodeClaims: %v", err)
	}
	defer w.Stop()

	start := time.Now()
	for _, name := range names {
		if err := client.CoreV1().Pods(tc.ns).Delete(tc.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	reasons := map[string]string{}
	var deletedAt time.Duration
	timeout := time.After(provisionTimeout)
	for len(left) > 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch of NodeClaims ended")
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				t.Fatalf("watching NodeClaims: %v", ev.Object)
			}
			if r := disruptionReason(obj); r != "" {
				reasons[obj.GetName()] = r
			}
			switch ev.Type {
			case watch.Added:
				t.Errorf("NodeClaim %s added after the pods were deleted", obj.GetName())
			case watch.Deleted:
				delete(left, obj.GetName())
				deletedAt = time.Since(start)
			}
		case <-timeout:
			t.Fatalf("NodeClaims %v still there %s after their pods were deleted (disruption reasons seen: %v); Karpenter's log: %s",
				slices.Sorted(maps.Keys(left)), provisionTimeout, reasons, kp.Log())
		}
		if err := kp.Err(); err != nil {
			t.Fatal(err)
		}
	}
	var nodeGone time.Duration
	tc.poll("the nodes to be deleted", provisionTimeout, func(ctx context.Context) (bool, error) {
		nodeGone = time.Since(start)
		return len(tc.nodes()) == 0, nil
	})
	t.Logf("pods deleted -> NodeClaim deleted %s, Node gone %s (consolidateAfter %s)",
		deletedAt.Round(time.Millisecond), nodeGone.Round(time.Millisecond), np.ConsolidateAfter)
	want := map[string]string{}
	for _, c := range list.Items {
		want[c.GetName()] = "Empty"
	}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("disruption reasons of the NodeClaims (-want +got):\n%s", diff)
	}
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *v1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == key })
}

// disruptionReason is the reason of a NodeClaim's true DisruptionReason
// condition, or "".
func disruptionReason(obj *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "DisruptionReason" && m["status"] == "True" {
			reason, _ := m["reason"].(string)
			return reason
		}
	}
	return ""
}

// karpenterLabels are a node's labels, sorted, for the test's log.
func karpenterLabels(labels map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+"="+labels[k])
	}
	return strings.Join(out, " ")
}
