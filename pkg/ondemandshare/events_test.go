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

package ondemandshare

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

func TestEventsToRegister(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tfw := newTestFramework(t, argsOf(webPolicy(50)), defaultWorld())
	events, err := tfw.pl.EventsToRegister(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []fwk.ClusterEvent
	for _, e := range events {
		got = append(got, e.Event)
	}
	want := []fwk.ClusterEvent{
		{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel},
		{Resource: fwk.Pod, ActionType: fwk.Add | fwk.Delete},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// hintCase is one call of a queueing hint for pod.
type hintCase struct {
	name     string
	pod      *v1.Pod
	old, new any
	want     fwk.QueueingHint
	wantErr  bool
}

func runHints(t *testing.T, hint fwk.QueueingHintFn, tests []hintCase) {
	t.Helper()
	logger, _ := ktesting.NewTestContext(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hint(logger, tc.pod, tc.old, tc.new)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want an error: %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}

// relabelled returns a copy of n of class.
func relabelled(n *v1.Node, class string) *v1.Node {
	n = n.DeepCopy()
	delete(n.Labels, capacityKey)
	if class != "" {
		n.Labels[capacityKey] = class
	}
	return n
}

func TestNodeHint(t *testing.T) {
	held := webPod("held")
	od, spot, plain := node("n", "on-demand"), node("n", "spot"), node("n", "")
	withZone := od.DeepCopy()
	withZone.Labels["topology.kubernetes.io/zone"] = "a"
	tests := []hintCase{
		{name: "an on-demand node added", pod: held, new: od, want: fwk.Queue},
		{name: "a spot node added", pod: held, new: spot, want: fwk.QueueSkip},
		{name: "a node of neither class added", pod: held, new: plain, want: fwk.QueueSkip},
		{name: "a typed nil old node is an addition", pod: held, old: (*v1.Node)(nil), new: od, want: fwk.Queue},
		{name: "spot became on-demand", pod: held, old: spot, new: relabelled(spot, "on-demand"), want: fwk.Queue},
		{name: "unlabelled became on-demand", pod: held, old: plain, new: od, want: fwk.Queue},
		{name: "on-demand gained another label", pod: held, old: od, new: withZone, want: fwk.QueueSkip},
		{name: "on-demand became spot", pod: held, old: od, new: spot, want: fwk.QueueSkip},
		{name: "the pod was decided since", pod: webPod("held", decidedAs(share.OnDemand)), new: spot, want: fwk.Queue},
		{name: "not a node", pod: held, new: "x", want: fwk.Queue, wantErr: true},
	}
	tfw := newTestFramework(t, argsOf(webPolicy(50)), defaultWorld(held))
	runHints(t, tfw.pl.isSchedulableAfterNodeChange, tests)
}

func TestPodHint(t *testing.T) {
	held := webPod("held")
	oldRS := ownedBy(controllerRef("apps/v1", "ReplicaSet", web2.Name, web2.UID))
	tests := []hintCase{
		{name: "a pod of the workload deleted", pod: held, old: webPod("x", on("od-1")), want: fwk.Queue},
		{name: "a pod of another ReplicaSet of the Deployment deleted", pod: held, old: webPod("x", oldRS), want: fwk.Queue},
		{name: "a pod of another workload deleted", pod: held, old: webPod("x", ownedBy(controllerRef("apps/v1", "StatefulSet", "db", "s-db"))), want: fwk.QueueSkip},
		{name: "a pod of another namespace deleted", pod: held, old: webPod("x", inNamespace("other")), want: fwk.QueueSkip},
		{name: "the pod itself deleted", pod: held, old: held, want: fwk.QueueSkip},
		{name: "a pod of the workload bound", pod: held, new: webPod("x", on("od-1")), want: fwk.Queue},
		{name: "a pod of the workload decided on-demand", pod: held, new: webPod("x", decidedAs(share.OnDemand)), want: fwk.Queue},
		{name: "a pod of the workload added unbound", pod: held, new: webPod("x"), want: fwk.QueueSkip},
		{name: "a pod of the workload decided spot", pod: held, new: webPod("x", decidedAs(share.Spot), on("spot-1")), want: fwk.QueueSkip},
		{name: "a bound pod of another workload", pod: held, new: webPod("x", on("od-1"), ownedBy(controllerRef("batch/v1", "Job", "j", "j"))), want: fwk.QueueSkip},
		{name: "the pod was decided since", pod: webPod("held", decidedAs(share.Spot)), old: webPod("x", on("od-1")), want: fwk.Queue},
		{name: "not a pod", pod: held, old: "x", want: fwk.Queue, wantErr: true},
	}
	tfw := newTestFramework(t, argsOf(webPolicy(50)), defaultWorld(held))
	runHints(t, tfw.pl.isSchedulableAfterPodChange, tests)
}
