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

package recorder

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"github.com/adminsched/scheduler-plugins/internal/schedtrace"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// fakeFramework answers the calls the recorder wraps; any other call panics
// (the embedded interface is nil).
type fakeFramework struct {
	framework.Framework
	preRes    *fwk.PreFilterResult
	preStatus *fwk.Status
	filter    map[string]*fwk.Status
	scores    []fwk.NodePluginScores
	hints     int
}

func (f *fakeFramework) ProfileName() string { return "p" }
func (f *fakeFramework) ListPlugins() *config.Plugins {
	return &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{{Name: "A", Weight: 1}, {Name: "B", Weight: 3}}}}
}
func (f *fakeFramework) RunPreFilterPlugins(context.Context, fwk.CycleState, *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	return f.preRes, f.preStatus, sets.New("NodeAffinity")
}
func (f *fakeFramework) RunFilterPluginsWithNominatedPods(_ context.Context, _ fwk.CycleState, _ *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	return f.filter[info.Node().Name]
}
func (f *fakeFramework) RunScorePlugins(context.Context, fwk.CycleState, *v1.Pod, []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	return f.scores, nil
}
func (f *fakeFramework) RunReservePluginsReserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return nil
}

func nodeInfo(name string) fwk.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return ni
}

func TestRecorder(t *testing.T) {
	ctx := context.Background()
	fake := &fakeFramework{
		filter: map[string]*fwk.Status{"n3": fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit")},
		scores: []fwk.NodePluginScores{
			withRawScores(fwk.NodePluginScores{Name: "n1", Scores: []fwk.PluginScore{{Name: "A", Score: 70}, {Name: "B", Score: 300}}, TotalScore: 370}, []fwk.PluginScore{{Name: "A", Score: 7}, {Name: "B", Score: 2}}),
			withRawScores(fwk.NodePluginScores{Name: "n2", Scores: []fwk.PluginScore{{Name: "A", Score: 100}, {Name: "B", Score: 0}}, TotalScore: 100}, []fwk.PluginScore{{Name: "A", Score: 10}, {Name: "B", Score: 0}}),
		},
	}
	var failures []string
	sched := &scheduler.Scheduler{
		Profiles: profile.Map{"p": fake},
		FailureHandler: func(_ context.Context, _ framework.Framework, _ *framework.QueuedPodInfo, status *fwk.Status, _ *fwk.NominatingInfo, _ time.Time) {
			failures = append(failures, status.Message())
		},
	}
	rec := New()
	Install(ctx, sched, rec)
	f := sched.Profiles["p"]
	if f == framework.Framework(fake) {
		t.Fatal("the profile's framework was not wrapped")
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod", UID: "u1"}}
	ref := types.NamespacedName{Namespace: "ns", Name: "pod"}

	if hint := nodeHint(ctx, f, pod); hint != "" || fake.hints != 0 {
		t.Errorf("GetNodeHint = %q (framework asked %d times), want no hint and no call", hint, fake.hints)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		state := framework.NewCycleState()
		if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
			t.Fatalf("PreFilter: %v", s)
		}
		var wg sync.WaitGroup
		for _, n := range []string{"n1", "n2", "n3"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo(n))
			}()
		}
		wg.Wait()
		got, s := f.RunScorePlugins(ctx, state, pod, []fwk.NodeInfo{nodeInfo("n1"), nodeInfo("n2")})
		if !s.IsSuccess() || len(got) != 2 || got[0].TotalScore != 370 {
			t.Fatalf("RunScorePlugins did not pass the framework's result on: %v %v", got, s)
		}
		f.RunReservePluginsReserve(ctx, state, pod, "n1")
	}
	a, ok := rec.Last(ref)
	if !ok {
		t.Fatal("no attempt recorded")
	}
	want := schedtrace.Attempt{
		Profile: "p", Pod: ref, UID: "u1", Number: 2,
		Weights: map[string]int{"A": 1, "B": 3},
		Filter: map[string]*schedtrace.Status{
			"n1": nil, "n2": nil,
			"n3": {Code: "Unschedulable", Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu"}},
		},
		Scores: []schedtrace.NodeScore{
			{Node: "n1", Plugins: []schedtrace.PluginScore{{Plugin: "A", Raw: 7, Weighted: 70}, {Plugin: "B", Raw: 2, Weighted: 300}}, Total: 370},
			{Node: "n2", Plugins: []schedtrace.PluginScore{{Plugin: "A", Raw: 10, Weighted: 100}, {Plugin: "B", Raw: 0, Weighted: 0}}, Total: 100},
		},
		Reserved: "n1",
	}
	if !kubeversion.Has(kubeversion.RawScores) {
		// Only weighted scores exist to record.
		for _, ns := range want.Scores {
			for i := range ns.Plugins {
				ns.Plugins[i].Raw = 0
			}
		}
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("attempt (-want +got):\n%s", diff)
	}

	// A third attempt rejected at PreFilter replaces the second, and the
	// failure handler still runs after recording.
	fake.preStatus = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector").WithPlugin("NodeAffinity")
	f.RunPreFilterPlugins(ctx, framework.NewCycleState(), pod)
	sched.FailureHandler(ctx, f, &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod}}, fwk.AsStatus(errors.New("0/3 nodes are available")), nil, time.Now())
	a, _ = rec.Last(ref)
	wantPre := &schedtrace.Status{Code: "UnschedulableAndUnresolvable", Plugin: "NodeAffinity", Reasons: []string{"node(s) didn't match Pod's node affinity/selector"}}
	if a.Number != 3 || !cmp.Equal(a.PreFilter, wantPre) || len(a.Filter) != 0 || a.Scores != nil || a.Reserved != "" || a.Failure != "0/3 nodes are available" {
		t.Errorf("third attempt: %+v", a)
	}
	if len(failures) != 1 {
		t.Errorf("the scheduler's failure handler ran %d times, want 1", len(failures))
	}
	if _, ok := rec.Last(types.NamespacedName{Namespace: "ns", Name: "other"}); ok {
		t.Error("an attempt for a pod never seen")
	}
}
