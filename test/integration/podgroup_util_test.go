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

// Pod groups exist since 1.36.

package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/localscheduler"
)

// podGroupAPI makes the shared cluster serve PodGroups and keep pods'
// spec.schedulingGroup (localcluster.WithPodGroupAPI: the API version and
// gates of this build's minor). It changes nothing for pods without a
// scheduling group, and no scheduler of the other tests watches PodGroups.
var podGroupAPI = []localcluster.Option{localcluster.WithPodGroupAPI()}

// enablePodGroupScheduling turns the pod-group gates
// (localcluster.PodGroupGates, GenericWorkload first) on in this process
// for the rest of the test: the schedulers built after it add GangScheduling
// to the default plugins, watch PodGroups and schedule each group's pods in
// one pod-group cycle. The gate is process-wide: no test that calls this may
// be parallel (SetFeatureGateDuringTest refuses a second override), and it
// must come before startScheduler, so that the scheduler, stopped by a later
// cleanup, is gone before the gate is restored (cleanups run last in, first
// out) and no scheduler of another test ever sees it.
func enablePodGroupScheduling(t *testing.T) {
	t.Helper()
	for _, g := range localcluster.PodGroupGates {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, featuregate.Feature(g), true)
	}
}

// requireGangScheduling fails the test unless the scheduler's first profile
// runs GangScheduling: without it the pods of a PodGroup are not held
// together and a test of gangs would pass for single pods.
func requireGangScheduling(t *testing.T, s *localscheduler.Scheduler) {
	t.Helper()
	var names []string
	for _, p := range s.Config.ComponentConfig.Profiles[0].Plugins.MultiPoint.Enabled {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "GangScheduling") {
		t.Fatalf("profile %s does not run GangScheduling (multiPoint: %v): are the gates %v on?",
			s.Config.ComponentConfig.Profiles[0].SchedulerName, names, localcluster.PodGroupGates)
	}
}

// gang is a PodGroup with a gang policy and its pods.
type gang struct {
	name string
	// size is the number of pods; minCount is the gang's minCount (size
	// when 0).
	size, minCount int
	// priority is the priority of the group and of each of its pods.
	priority int32
	// mutate, when set, edits each pod (made by makePod) before it is created.
	mutate func(*v1.Pod)
}

// createGang creates the PodGroup, then its pods, named <name>-<i>, and
// returns the pods' names.
func (tc *testContext) createGang(g gang) []string {
	tc.t.Helper()
	minCount := g.minCount
	if minCount == 0 {
		minCount = g.size
	}
	pg := &podGroup{
		ObjectMeta: metav1.ObjectMeta{Name: g.name, Namespace: tc.ns},
		Spec: podGroupSpec{
			SchedulingPolicy: podGroupSchedulingPolicy{
				Gang: &gangSchedulingPolicy{MinCount: int32(minCount)},
			},
		},
	}
	if g.priority != 0 {
		pg.Spec.Priority = ptr.To(g.priority)
	}
	if _, err := podGroups(tc.ns).Create(tc.ctx, pg, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating PodGroup %s: %v", g.name, err)
	}
	var names []string
	for i := range g.size {
		pod := tc.makePod(fmt.Sprintf("%s-%d", g.name, i))
		pod.Labels["gang"] = g.name
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(g.name)}
		if g.priority != 0 {
			pod.Spec.Priority = ptr.To(g.priority)
		}
		if g.mutate != nil {
			g.mutate(pod)
		}
		created := tc.createPod(pod)
		if created.Spec.SchedulingGroup == nil {
			tc.t.Fatalf("pod %s lost its spec.schedulingGroup: the API server does not run with the gates %v", pod.Name, localcluster.PodGroupGates)
		}
		names = append(names, created.Name)
	}
	return names
}

// gangPerNode counts the bound pods of a gang per node, with every node of
// nodes present.
func (tc *testContext) gangPerNode(nodes []string, name string) map[string]int {
	tc.t.Helper()
	return tc.podsPerNode(nodes, func(p *v1.Pod) bool { return p.Labels["gang"] == name })
}

// waitGangUnschedulable waits until the PodGroup's podGroupScheduled
// condition is False for Unschedulable, then checks that none of its pods is
// bound, and returns the condition's message.
func (tc *testContext) waitGangUnschedulable(name string, pods []string) string {
	tc.t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pg, err := podGroups(tc.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(pg.Status.Conditions, podGroupScheduled)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != podGroupUnschedulable {
			return false, nil
		}
		msg = c.Message
		return true, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for PodGroup %s to be Unschedulable: %v", name, err)
	}
	for _, n := range pods {
		pod, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, n, metav1.GetOptions{})
		if err != nil {
			tc.t.Fatalf("getting pod %s: %v", n, err)
		}
		if pod.Spec.NodeName != "" {
			tc.t.Fatalf("pod %s of the unschedulable gang %s is bound to %s: the gang was not all or nothing", n, name, pod.Spec.NodeName)
		}
	}
	return msg
}

// waitFailedSchedulingContaining waits for a FailedScheduling event of the
// test's namespace whose message contains text: in a pod-group cycle the
// gang's members fail with different messages, only the ones tried name the
// plugin's reason.
func (tc *testContext) waitFailedSchedulingContaining(text string) {
	tc.t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		events, err := adminClient.CoreV1().Events(tc.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range events.Items {
			if strings.Contains(e.Message, text) {
				return true, nil
			}
			seen = append(seen, e.InvolvedObject.Name+": "+e.Message)
		}
		return false, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for a FailedScheduling event containing %q (seen: %q): %v", text, seen, err)
	}
}

// waitScheduledBy waits until every named pod is bound, at the latest at
// deadline, and returns the node of each and when the last was seen bound.
func (tc *testContext) waitScheduledBy(deadline time.Time, names ...string) (map[string]string, time.Time) {
	tc.t.Helper()
	placed := make(map[string]string, len(names))
	ctx, cancel := context.WithDeadline(tc.ctx, deadline)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			if _, ok := placed[n]; ok {
				continue
			}
			pod, err := adminClient.CoreV1().Pods(tc.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if pod.Spec.NodeName == "" {
				return false, nil
			}
			placed[n] = pod.Spec.NodeName
		}
		return true, nil
	})
	if err != nil {
		tc.t.Fatalf("pods %v not all bound by %s (bound: %v): %v", names, deadline.UTC().Format(time.RFC3339), placed, err)
	}
	return placed, time.Now()
}
