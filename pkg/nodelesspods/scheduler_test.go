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

package nodelesspods_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"
	kubeschedulerv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/adminsched/scheduler-plugins/internal/schedulertest"
)

// These tests run NodeLessPods (LeastPods) inside kube-scheduler's own
// scheduling loop and check where pods end up. The count a node is scored by
// must be the scheduler's view of the node: every pod bound there or assumed
// there by any profile. Bindings reach the informers bindDelay after the
// scheduler made them, so a count kept beside the snapshot lags behind it.

// TestScoreOnlyEnablement enables NodeLessPods under score: only, as the
// tutorial's config does: Reserve is never called, so only the snapshot knows
// of the pods assumed since the last binding showed up.
func TestScoreOnlyEnablement(t *testing.T) {
	nodes := makeNodes(4)
	s := startScheduler(t, nodes, boundPods(nodes, 0, 10, 10, 10),
		internalProfiles(t, leastPodsProfile(v1.DefaultSchedulerName, scoreOnly))...)

	pods := pendingPods("new", 30, v1.DefaultSchedulerName)
	s.createPods(t, pods)
	s.waitBound(t, pods)
	s.expectEvenSpread(t, nodes, "new-") // 15/15/15/15
}

// TestTwoProfilesAlternating runs two profiles that both enable NodeLessPods,
// with pods alternating between them: each profile must see the pods the
// other one assumed.
func TestTwoProfilesAlternating(t *testing.T) {
	nodes := makeNodes(4)
	s := startScheduler(t, nodes, boundPods(nodes, 0, 10, 10, 10),
		internalProfiles(t, leastPodsProfile("profile-a", multiPoint), leastPodsProfile("profile-b", multiPoint))...)

	var pods []*v1.Pod
	for i, p := range pendingPods("new", 30, "profile-a") {
		if i%2 == 1 {
			p.Spec.SchedulerName = "profile-b"
		}
		pods = append(pods, p)
	}
	s.createPods(t, pods)
	s.waitBound(t, pods)
	s.expectEvenSpread(t, nodes, "new-") // 15/15/15/15
}

// TestNodeRecreatedWithPodsBound deletes a node and creates it again under
// the same name while its pods stay bound to it: the scheduler's cache keeps
// them on the node, and so must the count.
func TestNodeRecreatedWithPodsBound(t *testing.T) {
	nodes := makeNodes(3)
	s := startScheduler(t, nodes, boundPods(nodes, 6, 6, 6),
		internalProfiles(t, leastPodsProfile(v1.DefaultSchedulerName, multiPoint))...)

	recreated := nodes[0].Name
	if err := s.cs.CoreV1().Nodes().Delete(s.ctx, recreated, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting node %s: %v", recreated, err)
	}
	// The scheduler has seen the deletion when its cache holds the node's
	// pods without the node.
	s.waitCachedNode(t, recreated, 6, func(n *v1.Node) bool { return n == nil })

	newUID := types.UID(recreated + "-recreated")
	if _, err := s.cs.CoreV1().Nodes().Create(s.ctx, makeNode(recreated, newUID), metav1.CreateOptions{}); err != nil {
		t.Fatalf("re-creating node %s: %v", recreated, err)
	}
	s.waitCachedNode(t, recreated, 6, func(n *v1.Node) bool { return n != nil && n.UID == newUID })

	pods := pendingPods("new", 9, v1.DefaultSchedulerName)
	s.createPods(t, pods)
	s.waitBound(t, pods)
	s.expectEvenSpread(t, nodes, "new-") // 9/9/9
}

// waitCachedNode waits until the scheduler's cache holds pods pods on
// nodeName and a node object that satisfies ok (nil: deleted).
func (s *testScheduler) waitCachedNode(t *testing.T, nodeName string, pods int, ok func(*v1.Node) bool) {
	t.Helper()
	var state string
	err := wait.PollUntilContextTimeout(s.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		ni, err := schedulertest.CachedNode(s.sched.Cache, nodeName)
		if err != nil {
			state = err.Error()
			return false, nil
		}
		state = ni.String()
		return ok(ni.Node()) && len(ni.GetPods()) == pods, nil
	})
	if err != nil {
		t.Fatalf("waiting for the scheduler's cache to show node %s as expected: %v; it holds %s", nodeName, err, state)
	}
}

// TestBurstScoreAndReserve creates many pods at once for a profile that
// enables NodeLessPods at every extension point, on empty nodes.
func TestBurstScoreAndReserve(t *testing.T) {
	nodes := makeNodes(4)
	s := startScheduler(t, nodes, nil, internalProfiles(t, leastPodsProfile(v1.DefaultSchedulerName, multiPoint))...)

	pods := pendingPods("new", 40, v1.DefaultSchedulerName)
	s.createPodsAtOnce(t, pods)
	s.waitBound(t, pods)
	s.expectEvenSpread(t, nodes, "new-") // 10/10/10/10
}

// TestBatchingStaysOn checks that a profile with NodeLessPods keeps
// opportunistic batching (on by default since 1.35; a single PreFilter,
// Filter, PreScore or Score plugin that does not sign pods turns it off for
// the whole profile), and that identical pods, which batching places from a
// previous cycle's scores with only the last chosen node rescored, still
// spread evenly.
func TestBatchingStaysOn(t *testing.T) {
	const profileName = "batching"
	nodes := makeNodes(3)
	prof := leastPodsProfile(profileName, multiPoint)
	// PodTopologySpread refuses to sign any pod while system default
	// constraints apply, so a default profile never batches: turn them off,
	// as a profile that wants batching must.
	prof.PluginConfig = append(prof.PluginConfig, kubeschedulerv1.PluginConfig{
		Name: names.PodTopologySpread,
		Args: runtime.RawExtension{Object: &kubeschedulerv1.PodTopologySpreadArgs{DefaultingType: kubeschedulerv1.ListDefaulting}},
	})
	s := startScheduler(t, nodes, nil, internalProfiles(t, prof)...)

	pods := pendingPods("new", 30, profileName)
	// The framework signs a pod only when signatures are on for the profile
	// and every plugin that must sign does; it logs it when it turns them off.
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, "Disabling signatures for profile") {
			t.Errorf("the framework disabled signatures: %s", line)
		}
	}
	if sig := schedulertest.SignPod(s.ctx, s.sched.Profiles[profileName], pods[0]); sig == nil {
		t.Fatalf("profile %s does not sign pod %s: opportunistic batching is off for it", profileName, pods[0].Name)
	}

	hintsUsed := schedmetrics.BatchAttemptStats.WithLabelValues(profileName, schedmetrics.BatchAttemptHintUsed)
	before, _ := testutil.GetCounterMetricValue(hintsUsed)

	s.createPodsAtOnce(t, pods)
	s.waitBound(t, pods)
	s.expectEvenSpread(t, nodes, "new-") // 10/10/10

	// How many pods batching placed depends on timing (a batch lives
	// 500ms), so it is reported, not asserted. The counter is global:
	// -count runs add up.
	if after, err := testutil.GetCounterMetricValue(hintsUsed); err == nil {
		t.Logf("pods placed from a batch hint: %v of %d", after-before, len(pods))
	}
}
