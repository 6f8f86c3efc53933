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

	"github.com/adminsched/scheduler-plugins/internal/podgrouptest"
	"github.com/adminsched/scheduler-plugins/internal/snapshotdryrun"
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
				if got := c.Count(ni, i == 1); got != tc.want {
					t.Errorf("call %d: Count = %d, want %d", i, got, tc.want)
				}
			}
		})
	}
}

// TestMemoFollowsNodeInfo goes through the changes a NodeInfo sees under the
// scheduler, checking Count after each, from a regular and a pod-group cycle.
func TestMemoFollowsNodeInfo(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	c := New(countedByLabel, nil)
	ni := makeNodeInfo("n", makePod("a", "n", v1.PodRunning, true))
	check := func(step string, podGroupCycle bool, want int) {
		t.Helper()
		for i := range 2 { // the second call reads the memo
			if got := c.Count(ni, podGroupCycle); got != want {
				t.Errorf("%s, call %d: Count = %d, want %d", step, i, got, want)
			}
		}
	}
	assume := func(pod *v1.Pod) {
		generation := ni.Generation
		ni.AddPod(pod)
		ni.Generation = generation
	}
	forget := func(pod *v1.Pod) {
		t.Helper()
		generation := ni.Generation
		if err := ni.RemovePod(logger, pod); err != nil {
			t.Fatal(err)
		}
		ni.Generation = generation
	}
	check("one pod", false, 1)

	ni.AddPod(makePod("b", "n", v1.PodRunning, true))
	check("new generation", false, 2)

	counted := makePod("assumed", "n", v1.PodRunning, true)
	assume(counted)
	check("pod-group cycle, one pod assumed", true, 3)

	// Same generation, same number of pods, a counted pod swapped for one
	// that is not, with nothing to tell the cache.
	forget(counted)
	other := makePod("other", "n", v1.PodRunning, false)
	assume(other)
	check("pod-group cycle, the assumed pod swapped", true, 2)

	forget(other)
	check("pod-group cycle, nothing assumed", true, 2)
	check("regular cycle", false, 2)

	// With no memo of this generation from a regular cycle: the pod-group
	// cycle's memo compares every pod.
	ni.AddPod(makePod("c", "n", v1.PodRunning, false))
	assume(counted)
	check("new generation, first seen in a pod-group cycle", true, 3)
	forget(counted)
	assume(other)
	check("and swapped", true, 2)
	forget(other)
	check("regular cycle after it", false, 2)

	if got := c.Len(); got != 1 {
		t.Errorf("Len = %d, want 1", got)
	}
}

// TestDryRunClones scores the clones of a preemption dry run and the live
// NodeInfo afterwards: the memo is the node's, whichever NodeInfo it is.
func TestDryRunClones(t *testing.T) {
	podgrouptest.Skip(t)
	logger, _ := ktesting.NewTestContext(t)
	pods := []*v1.Pod{makePod("a", "n", v1.PodRunning, true), makePod("b", "n", v1.PodRunning, true)}
	snapshot := cache.NewSnapshot(pods, []*v1.Node{st.MakeNode().Name("n").Obj()})
	c := New(countedByLabel, snapshot.NodeInfos())
	count := func(step string, want int) {
		t.Helper()
		ni, err := snapshot.NodeInfos().Get("n")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Count(ni, true); got != want {
			t.Errorf("%s: Count = %d, want %d", step, got, want)
		}
	}
	count("live", 2)
	dryRun, err := snapshotdryrun.Start(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	count("clone", 2)
	if err := dryRun.RemovePod(logger, pods[0], "n"); err != nil {
		t.Fatal(err)
	}
	count("clone, victim removed", 1)
	if err := dryRun.End(); err != nil {
		t.Fatal(err)
	}
	count("live again", 2)
}

// TestPrune checks that the memos of NodeInfos the snapshot does not hold
// (deleted nodes, a dry run's clones) are dropped when the index is
// published, and that those of the snapshot's NodeInfos stay.
func TestPrune(t *testing.T) {
	live := []*v1.Node{st.MakeNode().Name("live-0").Obj(), st.MakeNode().Name("live-1").Obj()}
	snapshot := cache.NewSnapshot(nil, live)
	c := New(countedByLabel, snapshot.NodeInfos())
	var liveInfos []fwk.NodeInfo
	for _, n := range live {
		ni, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		liveInfos = append(liveInfos, ni)
		c.Count(ni, false)
		c.Count(ni, false) // seen again: published
	}
	for i := range 5 * minPublish {
		c.Count(makeNodeInfo(fmt.Sprintf("gone-%d", i)), false)
	}
	if got, limit := c.Len(), len(live)+minPublish; got >= limit {
		t.Errorf("Len = %d, want fewer than %d: the gone NodeInfos are dropped when the index is published", got, limit)
	}
	published := *c.published.Load()
	for _, ni := range liveInfos {
		if _, ok := published[ni]; !ok {
			t.Errorf("memo of %s was pruned", ni.Node().Name)
		}
	}
}

// TestCountConcurrent runs Count from many goroutines, as the scheduler's
// parallel Score does, in regular and pod-group cycles; run it with -race.
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
				if got, want := c.Count(ni, r%3 == 0), model(ni); got != want {
					errs <- fmt.Errorf("%s: Count = %d, want %d", ni.Node().Name, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
