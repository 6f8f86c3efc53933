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

package podcount

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// TestCountLooksAtFewPods checks that the memo saves work, which the
// correctness tests cannot see: a cache that recounted every pod on every
// call would pass them all. For each step it records the count and how many
// pods the counts function was asked about; the figures are those the package
// doc promises (a hit asks about none, a pod-group cycle on a known
// generation only about the assumed pods, a tail memo only about the pods
// after the common prefix).
func TestCountLooksAtFewPods(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	asked := 0
	c := New(func(p *v1.Pod) bool { asked++; return countedByLabel(p) }, nil)
	ni := makeNodeInfo("n",
		makePod("a", "n", v1.PodRunning, true),
		makePod("b", "n", v1.PodRunning, false),
		makePod("done", "n", v1.PodSucceeded, true)) // terminal: never asked about

	type step struct {
		Name  string
		Count int
		Asked int
	}
	var got []step
	count := func(name string, podGroupCycle bool) {
		asked = 0
		n := c.Count(ni, podGroupCycle)
		got = append(got, step{name, n, asked})
	}
	assume := func(pod *v1.Pod) {
		generation := ni.Generation
		ni.AddPod(pod)
		ni.Generation = generation
	}
	forget := func(pod *v1.Pod) {
		generation := ni.Generation
		if err := ni.RemovePod(logger, pod); err != nil {
			t.Fatal(err)
		}
		ni.Generation = generation
	}

	count("first look", false)
	count("hit", false)
	count("hit from a pod-group cycle", true)
	ni.AddPod(makePod("c", "n", v1.PodRunning, true))
	count("new generation", false)
	assumed := makePod("assumed", "n", v1.PodRunning, true)
	assume(assumed)
	count("pod-group cycle, one pod assumed", true)
	count("again", true)
	forget(assumed)
	count("regular cycle after it", false)

	// A generation first seen in a pod-group cycle: the tail memo.
	ni.AddPod(makePod("d", "n", v1.PodRunning, false))
	assume(assumed)
	count("generation first seen in a pod-group cycle", true)
	count("same pods", true)
	forget(assumed)
	other := makePod("other", "n", v1.PodRunning, false)
	assume(other)
	count("last pod swapped", true)

	want := []step{
		{"first look", 1, 2},
		{"hit", 1, 0},
		{"hit from a pod-group cycle", 1, 0},
		{"new generation", 2, 3},
		{"pod-group cycle, one pod assumed", 3, 1},
		{"again", 3, 1},
		{"regular cycle after it", 2, 0},
		{"generation first seen in a pod-group cycle", 3, 5},
		{"same pods", 3, 0},
		{"last pod swapped", 2, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want, +got):\n%s", diff)
	}
}

// TestLen checks that Len counts the memos both published and still pending
// (NodeInfos seen once, before enough new ones came to publish an index).
func TestLen(t *testing.T) {
	tests := []struct {
		name string
		// looks lists, in order, the nodes whose NodeInfo Count is called on.
		looks []int
		want  int
	}{
		{name: "empty", want: 0},
		{name: "one node seen once (pending)", looks: []int{0}, want: 1},
		{name: "one node seen twice (published)", looks: []int{0, 0}, want: 1},
		{name: "one published, two pending", looks: []int{0, 0, 1, 2}, want: 3},
		{name: "enough new nodes to publish", looks: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, want: 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(countedByLabel, nil)
			infos := map[int]fwk.NodeInfo{}
			for _, i := range tc.looks {
				if infos[i] == nil {
					infos[i] = makeNodeInfo(fmt.Sprintf("n-%d", i))
				}
				c.Count(infos[i], false)
			}
			if got := c.Len(); got != tc.want {
				t.Errorf("Len = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestPublishInBatches checks the amortization the slot lookup promises:
// NodeInfos seen once wait in pending until max(minPublish, published/8) of
// them have come, then all are published at once. Publishing on every new
// NodeInfo would copy the index each time (quadratic in the nodes);
// publishing later would keep more nodes on the locked path.
func TestPublishInBatches(t *testing.T) {
	tests := []struct {
		nodes         int
		wantPublished int
	}{
		{nodes: minPublish - 1, wantPublished: 0},
		{nodes: minPublish, wantPublished: minPublish},
		{nodes: minPublish + 1, wantPublished: minPublish},
		// From 72 published on, a batch is published/8 > minPublish.
		{nodes: 80, wantPublished: 72},
		{nodes: 81, wantPublished: 81},
		{nodes: 100, wantPublished: 91},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d nodes", tc.nodes), func(t *testing.T) {
			c := New(countedByLabel, nil)
			for i := range tc.nodes {
				c.Count(makeNodeInfo(fmt.Sprintf("n-%d", i)), false)
			}
			if got := len(*c.published.Load()); got != tc.wantPublished {
				t.Errorf("published %d memos, want %d", got, tc.wantPublished)
			}
			if got := c.Len(); got != tc.nodes {
				t.Errorf("Len = %d, want %d", got, tc.nodes)
			}
		})
	}
}

// TestPruneReplacedNodeInfo checks that a memo is dropped when the snapshot
// holds another NodeInfo under the same node name (a dry run's clone, a node
// re-created under its name), not only when the name is gone: otherwise the
// memos of replaced NodeInfos would pile up for the scheduler's lifetime. A
// NodeInfo that has lost its node is dropped too.
func TestPruneReplacedNodeInfo(t *testing.T) {
	snapshot := cache.NewSnapshot(nil, []*v1.Node{st.MakeNode().Name("n").Obj()})
	c := New(countedByLabel, snapshot.NodeInfos())
	live, err := snapshot.NodeInfos().Get("n")
	if err != nil {
		t.Fatal(err)
	}
	replaced := makeNodeInfo("n") // same name, not the snapshot's NodeInfo
	c.Count(replaced, false)
	// A NodeInfo whose node was removed (its pods not yet): Node() is nil.
	nodeless := makeNodeInfo("m")
	c.Count(nodeless, false)
	nodeless.RemoveNode()
	c.Count(live, false)
	c.Count(live, false) // seen again: publishes
	published := *c.published.Load()
	if _, ok := published[replaced]; ok {
		t.Error("the memo of a NodeInfo the snapshot replaced was kept")
	}
	if _, ok := published[nodeless]; ok {
		t.Error("the memo of a NodeInfo without a node was kept")
	}
	if _, ok := published[live]; !ok {
		t.Error("the memo of the snapshot's NodeInfo was dropped")
	}
}
