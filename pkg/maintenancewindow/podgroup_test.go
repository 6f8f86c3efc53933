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

package maintenancewindow

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
)

// fakePodGroups is the scheduler's pod-group view: groups by
// namespace/name, each with its placed and unplaced members.
type fakePodGroups struct {
	fwk.PodGroupManager
	groups map[string]*fakeGroup
}

func (f *fakePodGroups) PodGroupStates() fwk.PodGroupStateLister { return f }

func (f *fakePodGroups) Get(namespace, name string) (fwk.PodGroupState, error) {
	g, ok := f.groups[namespace+"/"+name]
	if !ok {
		return nil, fmt.Errorf("pod group %s/%s not found", namespace, name)
	}
	return g, nil
}

type fakeGroup struct {
	fwk.PodGroupState
	scheduled, unscheduled []*v1.Pod
}

func (g *fakeGroup) ScheduledPods() []*v1.Pod { return g.scheduled }
func (g *fakeGroup) ScheduledPodsCount() int  { return len(g.scheduled) }
func (g *fakeGroup) UnscheduledPods() map[string]*v1.Pod {
	m := map[string]*v1.Pod{}
	for _, p := range g.unscheduled {
		m[p.Namespace+"/"+p.Name] = p
	}
	return m
}

// groupHandle is fakeHandle with the scheduler's pod-group view.
type groupHandle struct {
	*fakeHandle
	groups *fakePodGroups
}

func (h groupHandle) PodGroupManager() fwk.PodGroupManager { return h.groups }

// member is jobPod in pod group g.
func member(name string, deadline int64, g string) *v1.Pod {
	p := jobPod(name, deadline, "")
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(g)}
	return p
}

// TestPodGroupRuntime: the node's window opens in an hour, avoidWithin 2h,
// margin 10m. Member a alone (20 minutes) would fit; it is judged by its
// group's longest runtime, or as unknown.
func TestPodGroupRuntime(t *testing.T) {
	rejected := "node's maintenance window opens at 2026-12-01T01:00:00Z (until 2026-12-01T03:00:00Z)"
	tests := []struct {
		name        string
		pod         *v1.Pod
		scheduled   []*v1.Pod
		unscheduled []*v1.Pod // besides pod
		noGroup     bool      // the scheduler does not know the group
		want        string
	}{
		{name: "every member ends first", pod: member("a", 1200, "g"),
			unscheduled: []*v1.Pod{member("b", 2400, "g"), member("c", 3000, "g")}},
		{name: "one member ends too late", pod: member("a", 1200, "g"),
			unscheduled: []*v1.Pod{member("b", 2400, "g"), member("c", 3001, "g")}, want: rejected},
		{name: "a placed member ends too late", pod: member("a", 1200, "g"),
			scheduled: []*v1.Pod{member("b", 3600, "g")}, want: rejected},
		{name: "one member's runtime unknown", pod: member("a", 1200, "g"),
			unscheduled: []*v1.Pod{member("b", 0, "g")}, want: rejected},
		{name: "the member's own runtime unknown", pod: member("a", 0, "g"),
			unscheduled: []*v1.Pod{member("b", 1200, "g")}, want: rejected},
		{name: "group unknown to the scheduler", pod: member("a", 1200, "g"), noGroup: true, want: rejected},
		{name: "alone in its group", pod: member("a", 1200, "g")},
	}
	for _, tc := range tests {
		for _, preFilter := range []bool{true, false} {
			name := tc.name
			if !preFilter {
				name += ", filter only"
			}
			t.Run(name, func(t *testing.T) {
				_, ctx := ktesting.NewTestContext(t)
				n := node("soon", interval(1, 3))
				pl, _, h := newPlugin(t, defaultArgs(func(a *config.MaintenanceWindowArgs) { a.AvoidWithin.Duration = 2 * time.Hour }), n)
				groups := &fakePodGroups{groups: map[string]*fakeGroup{}}
				pl.handle = groupHandle{h, groups}
				if !tc.noGroup {
					groups.groups["default/g"] = &fakeGroup{scheduled: tc.scheduled, unscheduled: append([]*v1.Pod{tc.pod}, tc.unscheduled...)}
				}
				var state fwk.CycleState
				if preFilter {
					cs := framework.NewCycleState()
					cs.SetPodGroupSchedulingCycle(framework.NewCycleState())
					state = cs
					if _, status := pl.PreFilter(ctx, state, tc.pod, nil); !status.IsSuccess() {
						t.Fatalf("PreFilter: %v", status)
					}
				}
				status := pl.Filter(ctx, state, tc.pod, nodeInfo(n))
				got := ""
				if !status.IsSuccess() {
					got = status.Message()
				}
				if got != tc.want {
					t.Errorf("Filter: got %q, want %q", got, tc.want)
				}
			})
		}
	}
}
