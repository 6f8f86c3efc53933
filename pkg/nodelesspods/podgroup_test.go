//go:build !kube1.35

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

// The scheduler's pod groups exist since 1.36: on 1.35 there is nothing
// here to test (README.md, "Kubernetes versions").

package nodelesspods

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/snapshotdryrun"
)

// The tests in this file drive the real cache.Snapshot the way the
// scheduler's pod-group cycles do (schedule_one_podgroup.go): members are
// assumed in the snapshot keeping the node's generation, a failed group is
// reverted with ForgetPod, again keeping it, and DefaultPreemption's
// pod-group PostFilter runs a dry run between StartMutations and
// EndMutations on clones of every NodeInfo.

// podGroupState returns a CycleState of a pod-group scheduling cycle.
func podGroupState() *framework.CycleState {
	state := framework.NewCycleState()
	state.SetPodGroupSchedulingCycle(framework.NewCycleState())
	return state
}

// groupMember returns a pod of pod group group, assumed onto nodeName.
func groupMember(name, ns, group, nodeName string) *v1.Pod {
	pod := boundPod(name, ns, nodeName).Obj()
	pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	return pod
}

type podGroupCycle struct {
	ctx      context.Context
	t        *testing.T
	pl       *NodeLessPods
	snapshot *cache.Snapshot
	state    fwk.CycleState
	// reserve runs Reserve and Unreserve around assume and forget, as a
	// profile that enables the plugin at reserve does.
	reserve bool
}

func (c *podGroupCycle) assume(pod *v1.Pod) {
	c.t.Helper()
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.snapshot.AssumePod(pi); err != nil {
		c.t.Fatalf("AssumePod(%s): %v", pod.Name, err)
	}
	if c.reserve {
		if status := c.pl.Reserve(c.ctx, c.state, pod, pod.Spec.NodeName); !status.IsSuccess() {
			c.t.Fatalf("Reserve(%s): %v", pod.Name, status)
		}
	}
}

func (c *podGroupCycle) forget(pod *v1.Pod) {
	c.t.Helper()
	if c.reserve {
		c.pl.Unreserve(c.ctx, c.state, pod, pod.Spec.NodeName)
	}
	if err := c.snapshot.ForgetPod(klog.FromContext(c.ctx), pod); err != nil {
		c.t.Fatalf("ForgetPod(%s): %v", pod.Name, err)
	}
}

// score returns the raw score of nodeName in the snapshot as it is now.
func (c *podGroupCycle) score(nodeName string) int64 {
	c.t.Helper()
	ni, err := c.snapshot.NodeInfos().Get(nodeName)
	if err != nil {
		c.t.Fatal(err)
	}
	s, status := c.pl.Score(c.ctx, c.state, &v1.Pod{}, ni)
	if !status.IsSuccess() {
		c.t.Fatalf("Score(%s): %v", nodeName, status)
	}
	return s
}

// enablements are the ways a profile can enable the plugin, as the pod-group
// tests run them.
var enablements = []struct {
	name    string
	reserve bool
}{
	{"score only", false},
	{"multiPoint", true},
}

func newPodGroupCycle(t *testing.T, reserve bool) *podGroupCycle {
	_, ctx := ktesting.NewTestContext(t)
	n1 := node("n1", 110)
	pl, snapshot := newTestPlugin(ctx, t,
		testArgs(func(a *config.NodeLessPodsArgs) { a.Namespaces = []string{"default"} }),
		[]*v1.Node{n1, node("n2", 110)},
		boundPod("a", "default", "n1").Obj(), boundPod("b", "default", "n1").Obj())
	return &podGroupCycle{ctx: ctx, t: t, pl: pl, snapshot: snapshot, state: podGroupState(), reserve: reserve}
}

// TestPodGroupSwap is issue 18's defect 1: gang G1 (counted pods) assumes P1
// on n1 and the next member scores n1; G1 fails and is reverted; gang G2
// (pods the plugin does not count) places Q1 on n1 without scoring it (its
// only feasible node). n1 then has the generation and the number of pods it
// had when it was scored with P1, and must still score 2, not 3.
func TestPodGroupSwap(t *testing.T) {
	for _, e := range enablements {
		t.Run(e.name, func(t *testing.T) {
			c := newPodGroupCycle(t, e.reserve)
			if got := c.score("n1"); got != 2 {
				t.Fatalf("before the groups: Score = %d, want 2", got)
			}
			p1 := groupMember("p1", "default", "g1", "n1")
			c.assume(p1)
			if got := c.score("n1"); got != 3 {
				t.Fatalf("G1's P1 assumed: Score = %d, want 3", got)
			}
			c.forget(p1)
			c.assume(groupMember("q1", "other", "g2", "n1")) // not counted: another namespace
			if got := c.score("n1"); got != 2 {
				t.Errorf("G1 reverted, G2's Q1 assumed: Score = %d, want 2 (a phantom pod of G1 is counted)", got)
			}
		})
	}
}

// TestPreemptionDryRun is issue 18's defect 2: a pod-group preemption dry
// run scores clones of every NodeInfo (StartMutations; BackupSnapshot
// in 1.36); afterwards Reserve
// and Unreserve must still keep the live NodeInfo's count right through the
// same swap as TestPodGroupSwap.
func TestPreemptionDryRun(t *testing.T) {
	for _, e := range enablements {
		t.Run(e.name, func(t *testing.T) {
			c := newPodGroupCycle(t, e.reserve)
			if got := c.score("n1"); got != 2 {
				t.Fatalf("before the dry run: Score = %d, want 2", got)
			}
			dryRun, err := snapshotdryrun.Start(c.snapshot)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.score("n1"); got != 2 {
				t.Fatalf("in the dry run: Score = %d, want 2", got)
			}
			victim := boundPod("a", "default", "n1").Obj()
			if err := dryRun.RemovePod(klog.FromContext(c.ctx), victim, "n1"); err != nil {
				t.Fatal(err)
			}
			if got := c.score("n1"); got != 1 {
				t.Fatalf("in the dry run, a victim removed: Score = %d, want 1", got)
			}
			if err := dryRun.End(); err != nil {
				t.Fatal(err)
			}
			if got := c.score("n1"); got != 2 {
				t.Fatalf("after the dry run: Score = %d, want 2", got)
			}
			p1 := groupMember("p1", "default", "g1", "n1")
			c.assume(p1)
			if got := c.score("n1"); got != 3 {
				t.Fatalf("P1 assumed: Score = %d, want 3", got)
			}
			c.forget(p1)
			c.assume(groupMember("q1", "other", "g2", "n1"))
			if got := c.score("n1"); got != 2 {
				t.Errorf("P1 forgotten, Q1 assumed: Score = %d, want 2", got)
			}
		})
	}
}
