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

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// lookup is one Count call in a sequence: in a pod-group cycle or not, after
// an optional change to the NodeInfo.
type lookup struct {
	change   func(ni *framework.NodeInfo)
	podGroup bool
}

var (
	newGeneration = func(ni *framework.NodeInfo) { ni.Generation++ }
	// assume appends a pod and keeps the generation, as Snapshot.AssumePod
	// does in a pod-group cycle.
	assume = func(ni *framework.NodeInfo) {
		g := ni.Generation
		ni.AddPod(makePod(fmt.Sprintf("assumed-%d", len(ni.GetPods())), "n", v1.PodPending, true))
		ni.Generation = g
	}
)

// TestRecounts checks how each Count call is counted, after known
// sequences: hits not at all (a hit writes nothing), tails and scans.
func TestRecounts(t *testing.T) {
	tests := []struct {
		name    string
		lookups []lookup
		want    Recounts
	}{
		{name: "none", want: Recounts{}},
		{
			name:    "first lookup scans, the next hit",
			lookups: []lookup{{}, {}, {}},
			want:    Recounts{Scan: 1},
		},
		{
			name:    "a new generation scans again",
			lookups: []lookup{{}, {change: newGeneration}, {}},
			want:    Recounts{Scan: 2},
		},
		{
			name:    "pod-group cycle, nothing assumed on the node: a hit",
			lookups: []lookup{{}, {podGroup: true}},
			want:    Recounts{Scan: 1},
		},
		{
			name:    "pod-group cycle with an assumed pod: the base plus a tail",
			lookups: []lookup{{}, {podGroup: true, change: assume}, {podGroup: true}},
			want:    Recounts{Tail: 2, Scan: 1},
		},
		{
			name: "generation seen only in pod-group cycles: scan, hit on the same pods, tail past them",
			lookups: []lookup{
				{podGroup: true},
				{podGroup: true},
				{podGroup: true, change: assume},
			},
			want: Recounts{Tail: 1, Scan: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ni := makeNodeInfo("n", makePod("a", "n", v1.PodRunning, true), makePod("b", "n", v1.PodRunning, false))
			c := New(countedByLabel, nil)
			for i, l := range tc.lookups {
				if l.change != nil {
					l.change(ni)
				}
				if got, want := c.Count(ni, l.podGroup), model(ni); got != want {
					t.Fatalf("lookup %d: Count = %d, want %d", i, got, want)
				}
			}
			if diff := cmp.Diff(tc.want, c.Recounts()); diff != "" {
				t.Errorf("Recounts (-want +got):\n%s", diff)
			}
		})
	}
}

func total(r Recounts) uint64 { return r.Tail + r.Scan }

// TestRecountsNeverDecrease prunes memos (NodeInfos that leave the snapshot)
// while counting and checks that the sums never go down and, once nothing
// runs, equal the number of scans made: a pruned slot's recounts are
// retired, not lost.
func TestRecountsNeverDecrease(t *testing.T) {
	live := []*v1.Node{st.MakeNode().Name("live-0").Obj(), st.MakeNode().Name("live-1").Obj()}
	snapshot := cache.NewSnapshot(nil, live)
	// Every gone NodeInfo holds one pod, so that the calls of the counts
	// function are its scans (a lookup whose slot was pruned scans again).
	podsScanned := 0
	c := New(func(p *v1.Pod) bool { podsScanned++; return countedByLabel(p) }, snapshot.NodeInfos())
	var liveInfos []fwk.NodeInfo
	for _, n := range live {
		ni, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		liveInfos = append(liveInfos, ni)
	}
	liveScans := 0
	var prev Recounts
	check := func(step string) {
		t.Helper()
		got := c.Recounts()
		if got.Tail < prev.Tail || got.Scan < prev.Scan {
			t.Fatalf("%s: recounts went down from %+v to %+v", step, prev, got)
		}
		prev = got
	}
	for round := range 5 {
		for _, ni := range liveInfos {
			c.Count(ni, false)
			if round == 0 {
				liveScans++
			}
		}
		// Gone NodeInfos, each looked up twice (a scan, then a hit),
		// then pruned by the publishes that the next ones cause.
		for i := range 2 * minPublish {
			ni := makeNodeInfo(fmt.Sprintf("gone-%d-%d", round, i), makePod("p", "gone", v1.PodRunning, true))
			c.Count(ni, false)
			c.Count(ni, false)
			check(fmt.Sprintf("round %d, gone node %d", round, i))
		}
	}
	if c.Len() >= len(live)+2*minPublish {
		t.Fatalf("Len = %d: the gone NodeInfos were not pruned, the test proves nothing", c.Len())
	}
	if podsScanned <= 5*2*minPublish {
		t.Fatalf("%d scans of gone NodeInfos: none was pruned before its second lookup, the orphan case is not covered", podsScanned)
	}
	if diff := cmp.Diff(Recounts{Scan: uint64(liveScans + podsScanned)}, c.Recounts()); diff != "" {
		t.Errorf("Recounts (-want +got):\n%s", diff)
	}
}

// TestRecountsConcurrent counts from parallel goroutines, as Score does, while
// another goroutine sums: run with -race. Each goroutine counts its own
// NodeInfos, as the framework scores each node on one goroutine.
func TestRecountsConcurrent(t *testing.T) {
	c := New(countedByLabel, nil)
	const goroutines, nodes, rounds = 8, 4, 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		var prev uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := total(c.Recounts()); n < prev {
				t.Errorf("recounts went down from %d to %d", prev, n)
				return
			} else {
				prev = n
			}
		}
	})
	var counters sync.WaitGroup
	for g := range goroutines {
		counters.Go(func() {
			var infos []*framework.NodeInfo
			for i := range nodes {
				infos = append(infos, makeNodeInfo(fmt.Sprintf("n-%d-%d", g, i), makePod("a", "n", v1.PodRunning, true)))
			}
			for r := range rounds {
				for _, ni := range infos {
					if r%50 == 0 {
						ni.Generation++ // the node changed: a scan
					}
					c.Count(ni, false)
				}
			}
		})
	}
	counters.Wait()
	close(stop)
	wg.Wait()
	want := Recounts{Scan: goroutines * nodes * rounds / 50}
	if diff := cmp.Diff(want, c.Recounts()); diff != "" {
		t.Errorf("Recounts (-want +got):\n%s", diff)
	}
}
