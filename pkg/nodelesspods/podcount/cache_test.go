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
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// countedLabel marks the pods the tests' counts function accepts.
const countedLabel = "counted"

func countedByLabel(pod *v1.Pod) bool { return pod.Labels[countedLabel] == "true" }

func makePod(name, node string, phase v1.PodPhase, counted bool) *v1.Pod {
	return st.MakePod().Name(name).Namespace("default").UID(name).Node(node).Phase(phase).
		Label(countedLabel, fmt.Sprint(counted)).Obj()
}

func makeNodeInfo(name string, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(st.MakeNode().Name(name).Obj())
	return ni
}

// model is the invariant: scan the NodeInfo.
func model(ni fwk.NodeInfo) int {
	n := 0
	for _, pi := range ni.GetPods() {
		p := pi.GetPod()
		if p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && countedByLabel(p) {
			n++
		}
	}
	return n
}

func TestCount(t *testing.T) {
	tests := []struct {
		name string
		pods []*v1.Pod
		want int
	}{
		{name: "no pods", want: 0},
		{name: "counted running pods", pods: []*v1.Pod{
			makePod("a", "n", v1.PodRunning, true), makePod("b", "n", v1.PodPending, true),
		}, want: 2},
		{name: "pods the function rejects", pods: []*v1.Pod{
			makePod("a", "n", v1.PodRunning, true), makePod("b", "n", v1.PodRunning, false),
		}, want: 1},
		{name: "terminal pods", pods: []*v1.Pod{
			makePod("a", "n", v1.PodSucceeded, true), makePod("b", "n", v1.PodFailed, true),
			makePod("c", "n", v1.PodRunning, true),
		}, want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(countedByLabel, nil)
			ni := makeNodeInfo("n", tc.pods...)
			for i := range 2 { // the second call reads the memo
				if got := c.Count(ni); got != tc.want {
					t.Errorf("call %d: Count = %d, want %d", i, got, tc.want)
				}
			}
		})
	}
}

// TestMemoKey checks each part of the memo's key, and Invalidate.
func TestMemoKey(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	c := New(countedByLabel, nil)
	ni := makeNodeInfo("n", makePod("a", "n", v1.PodRunning, true))
	check := func(step string, want int) {
		t.Helper()
		if got := c.Count(ni); got != want {
			t.Errorf("%s: Count = %d, want %d", step, got, want)
		}
	}
	check("one pod", 1)

	ni.AddPod(makePod("b", "n", v1.PodRunning, true))
	check("new generation", 2)

	generation := ni.Generation
	ni.AddPod(makePod("assumed", "n", v1.PodRunning, true))
	ni.Generation = generation
	check("same generation, one pod more", 3)

	// Same generation, same number of pods, one counted pod swapped for
	// one that is not: only Invalidate reveals it.
	if err := ni.RemovePod(logger, makePod("assumed", "n", v1.PodRunning, true)); err != nil {
		t.Fatal(err)
	}
	ni.AddPod(makePod("other", "n", v1.PodRunning, false))
	ni.Generation = generation
	check("same key: the memo", 3)
	c.Invalidate("n")
	check("after Invalidate", 2)

	c.Invalidate("unknown") // no slot: nothing to do, nothing created
	if got := c.Len(); got != 1 {
		t.Errorf("Len = %d, want 1", got)
	}
}

// TestPrune checks that memos of NodeInfos the snapshot no longer holds (a
// deleted node, or a node re-created under its name) go once the cache holds
// twice the snapshot's nodes plus the slack.
func TestPrune(t *testing.T) {
	live := []*v1.Node{st.MakeNode().Name("live-0").Obj(), st.MakeNode().Name("live-1").Obj()}
	snapshot := cache.NewSnapshot(nil, live)
	c := New(countedByLabel, snapshot.NodeInfos())
	c.Count(makeNodeInfo("live-0")) // the NodeInfo of an earlier live-0
	for _, n := range live {
		ni, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		c.Count(ni)
	}
	limit := 2*len(live) + minPruneSlack
	for i := 0; c.Len() < limit; i++ {
		c.Count(makeNodeInfo(fmt.Sprintf("gone-%d", i)))
	}
	if got := c.Len(); got != limit {
		t.Fatalf("Len = %d before the prune, want %d", got, limit)
	}
	c.Count(makeNodeInfo("new")) // one more than the limit: prune, then add
	if got, want := c.Len(), len(live)+1; got != want {
		t.Errorf("Len = %d after the prune, want %d (the live nodes and the new one)", got, want)
	}
	for _, n := range append(live, st.MakeNode().Name("new").Obj()) {
		c.mu.RLock()
		ni, ok := c.byName[n.Name]
		_, memoized := c.memos[ni]
		c.mu.RUnlock()
		if !ok || !memoized {
			t.Errorf("memo of %s was pruned", n.Name)
		}
	}
}

// TestCountConcurrent runs Count from many goroutines, as the scheduler's
// parallel Score does, with Invalidate from another; run it with -race.
func TestCountConcurrent(t *testing.T) {
	const nodes, workers, rounds = 32, 16, 200
	c := New(countedByLabel, nil)
	infos := make([]*framework.NodeInfo, nodes)
	for i := range infos {
		var pods []*v1.Pod
		for j := range i % 7 {
			pods = append(pods, makePod(fmt.Sprintf("p-%d-%d", i, j), "n", v1.PodRunning, j%2 == 0))
		}
		infos[i] = makeNodeInfo(fmt.Sprintf("n-%d", i), pods...)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				ni := infos[(w*7+r)%nodes]
				if got, want := c.Count(ni), model(ni); got != want {
					errs <- fmt.Errorf("%s: Count = %d, want %d", ni.Node().Name, got, want)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for r := range rounds {
			c.Invalidate(infos[r%nodes].Node().Name)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
