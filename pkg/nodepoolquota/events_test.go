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

package nodepoolquota

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

func TestEventsToRegister(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	events, err := newPlugin(nil, nil).EventsToRegister(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []fwk.ClusterEvent
	for _, e := range events {
		got = append(got, e.Event)
	}
	want := []fwk.ClusterEvent{
		{Resource: fwk.Pod, ActionType: fwk.Delete},
		{Resource: "nodepoolquotas.v1alpha1.scheduling.adminsched.io", ActionType: fwk.Update | fwk.Delete},
		{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// unstructuredQuota is q as the framework's dynamic informers hand it over.
func unstructuredQuota(t *testing.T, q *v1alpha1.NodePoolQuota) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(q)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestQuotaChangeHint(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(nil, namespaceLister(t, namespace("ml", "team", "a")))
	podA := gpuPod("p", "a-1", 1, 0)
	base := h100("10")
	edit := func(f func(q *v1alpha1.NodePoolQuota)) *v1alpha1.NodePoolQuota {
		q := base.DeepCopy()
		f(q)
		return q
	}
	raised := h100("12")
	lowered := h100("8")
	otherTeamRaised := edit(func(q *v1alpha1.NodePoolQuota) {
		q.Spec.Teams[1] = teamQuota("team-b", []string{"b-1"}, string(gpu), "20")
	})
	cpuAdded := edit(func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[0].Limits[v1.ResourceCPU] = *(resourceQ("4")) })
	gpuRemoved := edit(func(q *v1alpha1.NodePoolQuota) {
		delete(q.Spec.Teams[0].Limits, gpu)
		q.Spec.Teams[0].Limits[v1.ResourceCPU] = *(resourceQ("4"))
	})
	moved := edit(func(q *v1alpha1.NodePoolQuota) { q.Spec.NodeSelector.MatchLabels["pool"] = "h200" })
	nsLeft := edit(func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[0].Namespaces = []string{"a-2"} })
	selected := edit(func(q *v1alpha1.NodePoolQuota) {
		q.Spec.Teams[0].Namespaces = nil
		q.Spec.Teams[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	})
	selectedRaised := edit(func(q *v1alpha1.NodePoolQuota) {
		q.Spec.Teams[0].Namespaces = nil
		q.Spec.Teams[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
		q.Spec.Teams[0].Limits[gpu] = *(resourceQ("11"))
	})
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		old, new interface{}
		want     fwk.QueueingHint
		wantErr  bool
	}{
		{name: "limit raised", pod: podA, old: base, new: raised, want: fwk.Queue},
		{name: "limit raised, unstructured", pod: podA, old: unstructuredQuota(t, base), new: unstructuredQuota(t, raised), want: fwk.Queue},
		{name: "limit lowered", pod: podA, old: base, new: lowered, want: fwk.QueueSkip},
		{name: "unchanged", pod: podA, old: base, new: base.DeepCopy(), want: fwk.QueueSkip},
		{name: "another team's limit raised", pod: podA, old: base, new: otherTeamRaised, want: fwk.QueueSkip},
		{name: "a limit added", pod: podA, old: base, new: cpuAdded, want: fwk.QueueSkip},
		{name: "a limit removed", pod: podA, old: base, new: gpuRemoved, want: fwk.Queue},
		{name: "pool's nodes changed", pod: podA, old: base, new: moved, want: fwk.Queue},
		{name: "namespace left the team", pod: podA, old: base, new: nsLeft, want: fwk.Queue},
		{name: "deleted", pod: podA, old: base, new: nil, want: fwk.Queue},
		{name: "deleted, final state unknown", pod: podA, old: cache.DeletedFinalStateUnknown{Obj: base}, new: nil, want: fwk.Queue},
		{name: "pod of no team", pod: gpuPod("p", "default", 1, 0), old: base, new: raised, want: fwk.QueueSkip},
		{name: "pod of no team, deleted", pod: gpuPod("p", "default", 1, 0), old: base, new: nil, want: fwk.QueueSkip},
		{name: "selected by label, raised", pod: gpuPod("p", "ml", 1, 0), old: selected, new: selectedRaised, want: fwk.Queue},
		{name: "selected by label, unchanged", pod: gpuPod("p", "ml", 1, 0), old: selected, new: selected.DeepCopy(), want: fwk.QueueSkip},
		{name: "not a quota", pod: podA, old: base, new: &v1.Pod{}, want: fwk.Queue, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterQuotaChange(logger, tc.pod, tc.old, tc.new)
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQuotaRaiseLetsPodsIn fills team-a's quota, raises it, and checks that
// the hint queues the held pod and that the next cycles fit exactly the
// room the raise made.
func TestQuotaRaiseLetsPodsIn(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	h := newHarness(t, nil, []*v1alpha1.NodePoolQuota{h100("3")}, clusterNodes())
	schedule := func(n int, prefix string) int {
		placed := 0
		for i := range n {
			pod := gpuPod(fmt.Sprintf("%s-%d", prefix, i), "a-1", 1, 0)
			if pool := inPool(h.cycle(pod).feasible); len(pool) > 0 {
				h.assume(pod, pool[0])
				placed++
			}
		}
		return placed
	}
	if placed := schedule(5, "first"); placed != 3 {
		t.Fatalf("%d placed under a quota of 3", placed)
	}
	held := gpuPod("held", "a-1", 1, 0)
	raised := h100("5")
	raised.ResourceVersion = "2"
	if hint, err := h.pl.isSchedulableAfterQuotaChange(logger, held, h100("3"), raised); err != nil || hint != fwk.Queue {
		t.Fatalf("hint for a raise from 3 to 5: %v, %v; want Queue", hint, err)
	}
	h.pl.setQuotas(logger, []*v1alpha1.NodePoolQuota{raised})
	if placed := schedule(5, "second"); placed != 2 {
		t.Errorf("%d placed after the raise to 5, want 2", placed)
	}
}

func TestPodDeletedHint(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pl := newPlugin(nil, nil)
	pl.setQuotas(logger, []*v1alpha1.NodePoolQuota{h100("10")})
	bound := func(p *v1.Pod) *v1.Pod { p.Spec.NodeName = "h1"; return p }
	podA := gpuPod("p", "a-1", 1, 0)
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		deleted interface{}
		want    fwk.QueueingHint
		wantErr bool
	}{
		{name: "a bound pod of the team", pod: podA, deleted: bound(gpuPod("d", "a-2", 1, 0)), want: fwk.Queue},
		{name: "final state unknown", pod: podA, deleted: cache.DeletedFinalStateUnknown{Obj: bound(gpuPod("d", "a-1", 1, 0))}, want: fwk.Queue},
		{name: "an unbound pod of the team", pod: podA, deleted: gpuPod("d", "a-2", 1, 0), want: fwk.QueueSkip},
		{name: "a bound pod of another team", pod: podA, deleted: bound(gpuPod("d", "b-1", 1, 0)), want: fwk.QueueSkip},
		{name: "a bound pod of no team", pod: podA, deleted: bound(gpuPod("d", "default", 1, 0)), want: fwk.QueueSkip},
		{name: "the pod no longer counts", pod: gpuPod("p", "default", 1, 0), deleted: bound(gpuPod("d", "a-1", 1, 0)), want: fwk.Queue},
		{name: "not a pod", pod: podA, deleted: &v1.Node{}, want: fwk.Queue, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterPodDeleted(logger, tc.pod, tc.deleted, nil)
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint %v, want %v", got, tc.want)
			}
		})
	}
}

func resourceQ(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}
