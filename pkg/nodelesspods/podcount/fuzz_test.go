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
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/adminsched/scheduler-plugins/internal/podgrouptest"
	"github.com/adminsched/scheduler-plugins/internal/snapshotdryrun"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// The cache reports to the scheduler's metrics, which must exist first.
var initMetrics = sync.OnceFunc(metrics.InitMetrics)

// The property and fuzz tests drive the scheduler's real cache and Snapshot
// through the changes the scheduler makes, in any order the scheduler can
// make them, and check the invariant whenever a node is counted: Count
// equals a scan of the snapshot's NodeInfo (model).

const fuzzNodes = 3

// Each byte of an input is one step: b % numSteps picks the change, and
// b / numSteps the node it applies to. A step the scheduler could not take
// in the current state (a ForgetPod with nothing assumed, a dry-run change
// outside a dry run...) does nothing.
const (
	stepCacheAdd       = iota // a pod is bound: the cache adds it
	stepCacheRemove           // a bound pod is deleted
	stepCacheUpdate           // a bound pod's labels change: counted or no longer
	stepCacheTerminate        // a bound pod turns Succeeded
	stepCacheAssume           // a regular cycle assumes a pod in the cache, then its binding is confirmed
	stepRecreateNode          // the node is deleted and created again under its name
	stepNewCycle              // a new cycle: assumed pods reverted, UpdateSnapshot; regular or pod group by the node bit
	stepAssume                // pod-group cycle: Snapshot.AssumePod of a group member
	stepForget                // pod-group cycle: the last assumed pod reverted (Snapshot.ForgetPod)
	stepDryRunStart           // pod-group preemption: StartMutations (1.36: BackupSnapshot)
	stepDryRunRemove          // dry run: a victim removed (Snapshot.RemovePod; 1.36: its clone's NodeInfo.RemovePod)
	stepDryRunAdd             // dry run: a pod added (Snapshot.AddPod; 1.36: NodeInfo.AddPodInfo)
	stepDryRunEnd             // dry run: its assumed pods reverted, EndMutations (1.36: the restore)
	stepCount                 // Count on the node, checked against the model
	numSteps
)

type fuzzWorld struct {
	logger   klog.Logger
	cache    cache.Cache
	snapshot *cache.Snapshot
	counts   *Cache
	nodes    [fuzzNodes]*v1.Node
	// bound holds, per node, the pods the cache has as bound.
	bound [fuzzNodes][]*v1.Pod
	// assumed are the pods assumed in the snapshot, in assume order.
	assumed []*v1.Pod
	// dryRunFrom is the number of pods assumed before the dry run, or -1
	// outside a dry run.
	dryRunFrom    int
	dryRun        snapshotdryrun.DryRun
	podGroupCycle bool
	next          int
}

func newFuzzWorld(ctx context.Context) (*fuzzWorld, error) {
	initMetrics()
	w := &fuzzWorld{
		logger:     klog.FromContext(ctx),
		cache:      newCache(ctx),
		snapshot:   cache.NewEmptySnapshot(),
		dryRunFrom: -1,
	}
	w.counts = New(countedByLabel, w.snapshot.NodeInfos())
	for i := range w.nodes {
		w.nodes[i] = st.MakeNode().Name(fmt.Sprintf("n%d", i)).Obj()
		w.cache.AddNode(w.logger, w.nodes[i])
	}
	return w, w.cache.UpdateSnapshot(w.logger, w.snapshot)
}

// newPod returns a new pod on node; one in three is not counted. A member
// belongs to a pod group where the minor has them.
func (w *fuzzWorld) newPod(node string, member bool) *v1.Pod {
	w.next++
	pod := makePod(fmt.Sprintf("p%d", w.next), node, v1.PodRunning, w.next%3 != 0)
	if member && kubeversion.Has(kubeversion.PodGroups) {
		group := fmt.Sprintf("g%d", w.next%2)
		podgrouptest.SetGroup(pod, group)
	}
	return pod
}

func (w *fuzzWorld) assume(pod *v1.Pod) error {
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		return err
	}
	if err := podgrouptest.Assume(w.snapshot, pi); err != nil {
		return err
	}
	w.assumed = append(w.assumed, pod)
	return nil
}

// forgetDownTo reverts assumed pods, the last first, until n are left.
func (w *fuzzWorld) forgetDownTo(n int) error {
	for len(w.assumed) > n {
		last := w.assumed[len(w.assumed)-1]
		if err := podgrouptest.Forget(w.snapshot, w.logger, last); err != nil {
			return err
		}
		w.assumed = w.assumed[:len(w.assumed)-1]
	}
	return nil
}

// victim returns a pod of node's NodeInfo that is not assumed, or nil:
// preemption removes bound pods, never the group's own assumed ones.
func (w *fuzzWorld) victim(node string) *v1.Pod {
	ni, err := w.snapshot.NodeInfos().Get(node)
	if err != nil {
		return nil
	}
	for _, pi := range ni.GetPods() {
		if !slices.ContainsFunc(w.assumed, func(p *v1.Pod) bool { return p.UID == pi.GetPod().UID }) {
			return pi.GetPod()
		}
	}
	return nil
}

// step applies b and returns an error when the invariant breaks.
func (w *fuzzWorld) step(b byte) error {
	i := int(b/numSteps) % fuzzNodes
	node := w.nodes[i].Name
	inDryRun := w.dryRunFrom >= 0
	var err error
	switch int(b) % numSteps {
	case stepCacheAdd:
		pod := w.newPod(node, w.next%2 == 0)
		err = w.cache.AddPod(w.logger, pod)
		w.bound[i] = append(w.bound[i], pod)
	case stepCacheRemove:
		if len(w.bound[i]) > 0 {
			err = w.cache.RemovePod(w.logger, w.bound[i][0])
			w.bound[i] = w.bound[i][1:]
		}
	case stepCacheUpdate, stepCacheTerminate:
		if len(w.bound[i]) > 0 {
			old := w.bound[i][0]
			updated := old.DeepCopy()
			if int(b)%numSteps == stepCacheTerminate {
				updated.Status.Phase = v1.PodSucceeded
			} else {
				updated.Labels[countedLabel] = fmt.Sprint(!countedByLabel(old))
			}
			err = w.cache.UpdatePod(w.logger, old, updated)
			w.bound[i][0] = updated
		}
	case stepCacheAssume:
		pod := w.newPod(node, false)
		if err = w.cache.AssumePod(w.logger, pod); err == nil {
			err = w.cache.AddPod(w.logger, pod)
		}
		w.bound[i] = append(w.bound[i], pod)
	case stepRecreateNode:
		if err = w.cache.RemoveNode(w.logger, w.nodes[i]); err == nil {
			w.nodes[i] = w.nodes[i].DeepCopy()
			w.nodes[i].UID = ""
			w.cache.AddNode(w.logger, w.nodes[i])
		}
	case stepNewCycle:
		if !inDryRun {
			if err = w.forgetDownTo(0); err == nil {
				err = w.cache.UpdateSnapshot(w.logger, w.snapshot)
			}
			// 1.35 has no pod-group cycles: every cycle is regular there.
			w.podGroupCycle = i%2 == 1 && kubeversion.Has(kubeversion.PodGroups)
		}
	case stepAssume:
		if w.podGroupCycle {
			err = w.assume(w.newPod(node, true))
		}
	case stepForget:
		if w.podGroupCycle && len(w.assumed) > max(w.dryRunFrom, 0) {
			err = w.forgetDownTo(len(w.assumed) - 1)
		}
	case stepDryRunStart:
		if w.podGroupCycle && !inDryRun {
			w.dryRun, err = snapshotdryrun.Start(w.snapshot)
			w.dryRunFrom = len(w.assumed)
		}
	case stepDryRunRemove:
		if victim := w.victim(node); inDryRun && victim != nil {
			err = w.dryRun.RemovePod(w.logger, victim, node)
		}
	case stepDryRunAdd:
		if inDryRun {
			var pi *framework.PodInfo
			if pi, err = framework.NewPodInfo(w.newPod(node, true)); err == nil {
				err = w.dryRun.AddPod(pi, node)
			}
		}
	case stepDryRunEnd:
		if inDryRun {
			if err = w.forgetDownTo(w.dryRunFrom); err == nil {
				err = w.dryRun.End()
			}
			w.dryRunFrom = -1
		}
	case stepCount:
		return w.check(node)
	}
	if err != nil {
		return fmt.Errorf("the framework refused the step: %w", err)
	}
	return nil
}

// check compares Count with the model on the snapshot's NodeInfos of nodes,
// or all of them. Only some steps check, as only some nodes are scored in a
// cycle: a node's memo must stay right through changes it is not scored in.
func (w *fuzzWorld) check(nodes ...string) error {
	infos, err := w.snapshot.NodeInfos().List()
	if err != nil {
		return err
	}
	for _, ni := range infos {
		if len(nodes) > 0 && !slices.Contains(nodes, ni.Node().Name) {
			continue
		}
		if got, want := w.counts.Count(ni, w.podGroupCycle), model(ni); got != want {
			return fmt.Errorf("%s (generation %d, %d pods, pod-group cycle %v): Count = %d, want %d",
				ni.Node().Name, ni.GetGeneration(), len(ni.GetPods()), w.podGroupCycle, got, want)
		}
	}
	return nil
}

func runSteps(t *testing.T, steps []byte) {
	t.Helper()
	// Verbosity 1: the cache logs every node it adds at 2 or more.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(1)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()
	w, err := newFuzzWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for n, b := range steps {
		if err := w.step(b); err != nil {
			t.Fatalf("step %d (%d: change %d on n%d): %v", n, b, int(b)%numSteps, int(b/numSteps)%fuzzNodes, err)
		}
	}
	if err := w.check(); err != nil {
		t.Fatalf("after the last step: %v", err)
	}
}

// at returns the input byte of change on node i.
func at(change, i int) byte { return byte(i*numSteps + change) }

// FuzzCache applies each input's steps and fails when the cache and the model
// disagree. The seeds run in every `go test`; `make fuzz` explores further.
func FuzzCache(f *testing.F) {
	f.Add([]byte{})
	// Issue 18, defect 1: a counted member (p2) assumed and counted, its
	// group reverted, an uncounted member of another group (p3) assumed in
	// its place without a count in between.
	f.Add([]byte{at(stepCacheAdd, 0), at(stepNewCycle, 1), at(stepCount, 0), at(stepAssume, 0), at(stepCount, 0),
		at(stepForget, 0), at(stepAssume, 0), at(stepCount, 0)})
	// Defect 2's shape: a dry run counts the clones, then the same swap on
	// the live NodeInfo.
	f.Add([]byte{at(stepCacheAdd, 0), at(stepNewCycle, 1), at(stepCount, 0), at(stepDryRunStart, 0), at(stepCount, 0),
		at(stepDryRunRemove, 0), at(stepCount, 0), at(stepDryRunEnd, 0), at(stepAssume, 0), at(stepCount, 0),
		at(stepForget, 0), at(stepAssume, 0), at(stepCount, 0)})
	f.Add([]byte{at(stepCacheAssume, 1), at(stepRecreateNode, 1), at(stepCacheTerminate, 1), at(stepNewCycle, 0),
		at(stepCacheUpdate, 1), at(stepNewCycle, 1), at(stepAssume, 1)})
	f.Fuzz(func(t *testing.T, data []byte) {
		runSteps(t, data)
	})
}

// TestCacheMatchesModel runs long random sequences of steps. Pod-group steps
// are drawn more often than cache changes, so that generations live long
// enough for assumed pods to be swapped under them.
func TestCacheMatchesModel(t *testing.T) {
	weights := [numSteps]int{
		stepCacheAdd: 3, stepCacheRemove: 2, stepCacheUpdate: 1, stepCacheTerminate: 1, stepCacheAssume: 1,
		stepRecreateNode: 1, stepNewCycle: 3, stepAssume: 6, stepForget: 5, stepDryRunStart: 1,
		stepDryRunRemove: 2, stepDryRunAdd: 2, stepDryRunEnd: 1, stepCount: 4,
	}
	var table []int
	for change, weight := range weights {
		for range weight {
			table = append(table, change)
		}
	}
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0))
			steps := make([]byte, 3000)
			for n := range steps {
				steps[n] = at(table[r.IntN(len(table))], r.IntN(fuzzNodes))
			}
			runSteps(t, steps)
		})
	}
}
