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

package nodelesspods

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestPreScoreCountsEveryCandidate checks that PreScore does the cycle's
// recounts, of every candidate and of a changed node, so that the Score
// calls after it are all memo hits; and that the scores are those of a
// profile without PreScore.
func TestPreScoreCountsEveryCandidate(t *testing.T) {
	for _, podGroup := range []bool{false, true} {
		t.Run(map[bool]string{false: "regular cycle", true: "pod-group cycle"}[podGroup], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			nodes := []*v1.Node{node("n1", 10), node("n2", 10), node("n3", 10)}
			pods := []*v1.Pod{boundPod("a", "default", "n1").Obj(), boundPod("b", "default", "n1").Obj(), boundPod("c", "default", "n2").Obj()}
			pl, snapshot := newTestPlugin(ctx, t, testArgs(nil), nodes, pods...)
			plain, _ := newTestPlugin(ctx, t, testArgs(nil), nodes, pods...)
			nodeInfos, err := snapshot.NodeInfos().List()
			if err != nil {
				t.Fatal(err)
			}
			state := framework.NewCycleState()
			if podGroup {
				state = podGroupState()
			}
			cycle := func(step string, wantScans uint64) {
				t.Helper()
				before := pl.counts.Recounts()
				if status := pl.PreScore(ctx, state, &v1.Pod{}, nodeInfos); !status.IsSuccess() {
					t.Fatalf("%s: PreScore: %v", step, status)
				}
				afterPreScore := pl.counts.Recounts()
				if got := afterPreScore.Scan - before.Scan; got != wantScans {
					t.Errorf("%s: PreScore scanned %d nodes, want %d", step, got, wantScans)
				}
				for _, ni := range nodeInfos {
					got, status := pl.Score(ctx, state, &v1.Pod{}, ni)
					if !status.IsSuccess() {
						t.Fatalf("%s: Score(%s): %v", step, ni.Node().Name, status)
					}
					want, _ := plain.Score(ctx, state, &v1.Pod{}, ni)
					if got != want {
						t.Errorf("%s: Score(%s) = %d, want %d as without PreScore", step, ni.Node().Name, got, want)
					}
				}
				if after := pl.counts.Recounts(); after != afterPreScore {
					t.Errorf("%s: Score recounted after PreScore: %+v, then %+v", step, afterPreScore, after)
				}
			}
			cycle("first cycle", 3)
			cycle("nothing changed", 0)
			// The scheduler's cache adds a pod to n3: a new NodeInfo
			// generation, which the next snapshot carries.
			findNodeInfo(t, nodeInfos, "n3").AddPod(boundPod("d", "default", "n3").Obj())
			cycle("n3 changed", 1)
		})
	}
}

func findNodeInfo(t *testing.T, nodeInfos []fwk.NodeInfo, name string) *framework.NodeInfo {
	t.Helper()
	for _, ni := range nodeInfos {
		if ni.Node().Name == name {
			return ni.(*framework.NodeInfo)
		}
	}
	t.Fatalf("no NodeInfo for %s", name)
	return nil
}

// TestPreScoreNeverSkips checks that PreScore succeeds, also with no state
// and with a NodeInfo whose node is gone: Score and NormalizeScore must run.
func TestPreScoreNeverSkips(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, snapshot := newTestPlugin(ctx, t, testArgs(nil), []*v1.Node{node("n1", 10)})
	nodeInfos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []fwk.CycleState{framework.NewCycleState(), nil} {
		if status := pl.PreScore(ctx, state, &v1.Pod{}, append(nodeInfos, framework.NewNodeInfo())); status != nil {
			t.Errorf("PreScore(state %v) = %v, want success", state != nil, status)
		}
	}
}
