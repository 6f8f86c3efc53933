//go:build !kube1.36 && !kube1.35

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

// Gangs under a quota are checked on 1.37's pod-group cycles only
// (scheduling.k8s.io/v1beta1, podgroupapi_kube137_test.go).

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// npqGangRole labels the pods of every gang of TestPodGroupNodePoolQuota,
// so that one sampler counts them all against the quota.
const npqGangRole = "gang"

// gpuGangMember makes a gang member a one-GPU pod of the pool, labelled
// npqGangRole.
func gpuGangMember(p *v1.Pod) {
	p.Labels[npqRole] = npqGangRole
	p.Spec.NodeSelector = map[string]string{"pool": npqPool}
	one := resource.MustParse("1")
	c := &p.Spec.Containers[0]
	c.Resources.Requests[npqGPU] = one
	c.Resources.Limits = v1.ResourceList{npqGPU: one}
}

// waitGangHeld waits until the PodGroup name is Unschedulable and one of
// its pods, or one of their FailedScheduling events, says why with text;
// it returns how many of the gang's pods are bound, and the messages seen.
// It returns early, without text, once every pod of the gang is bound: the
// quota did not hold it.
func (e *npqTest) waitGangHeld(name string, pods []string, text string) (int, []string) {
	e.t.Helper()
	var (
		bound int
		seen  []string
	)
	err := wait.PollUntilContextTimeout(e.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		bound, seen = 0, seen[:0]
		found := false
		for _, n := range pods {
			p, err := adminClient.CoreV1().Pods(e.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName != "" {
				bound++
				continue
			}
			if msg := rejection(p); msg != "" {
				seen = append(seen, n+": "+msg)
				found = found || strings.Contains(msg, text)
			}
		}
		if bound == len(pods) {
			return true, nil
		}
		events, err := adminClient.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		if err != nil {
			return false, err
		}
		for _, ev := range events.Items {
			if strings.HasPrefix(ev.InvolvedObject.Name, name+"-") && strings.Contains(ev.Message, text) {
				found = true
			}
		}
		pg, err := podGroups(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(pg.Status.Conditions, podGroupScheduled)
		held := c != nil && c.Status == metav1.ConditionFalse && c.Reason == podGroupUnschedulable
		if held {
			seen = append(seen, "PodGroup "+name+": "+c.Message)
		}
		return held && found, nil
	})
	if err != nil {
		e.t.Fatalf("gang %s: waiting for it to be held with %q (%d of %d bound; seen %q): %v", name, text, bound, len(pods), seen, err)
	}
	return bound, seen
}

// TestPodGroupNodePoolQuota runs gangs of one-GPU pods of team-a, quota 3
// GPUs, in a pool of 16 GPUs, with pod-group scheduling on. In a pod-group
// cycle each member is assumed into the cycle's snapshot before the next
// is filtered, and a gang that cannot reach its minCount is reverted: the
// plugin must count the members assumed so far, so that the 4th of a gang
// of 4 sees 3 of 3 used although nothing is bound, and must forget them
// again, so that a gang of 3 after it fits. A gang of 2 more is then held.
// The gang of 4 stays pending and is retried throughout; no sample of the
// bound pods may exceed the quota.
func TestPodGroupNodePoolQuota(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	npqInstallCRD(ctx, t)
	// Before the scheduler starts: see enablePodGroupScheduling.
	enablePodGroupScheduling(t)
	e := newNPQTest(t)
	e.createPool("npq-pg", 2, 0)
	e.createQuota(3, 0)
	requireGangScheduling(t, e.testContext.startScheduler(schedulerConfig(profile("NodePoolQuota", 0, nil))))
	samples := e.sample(e.teamA, npqGangRole)
	const full = "team team-a uses 3 of 3 nvidia.com/gpu in pool gpu"

	// (a) Nothing of team-a is bound: only the gang's own assumed members
	// can make its 4th see 3 of 3.
	four := e.createGang(gang{name: "four", size: 4, mutate: gpuGangMember})
	bound, seen := e.waitGangHeld("four", four, full)
	t.Logf("gang of 4: %d bound; %s", bound, strings.Join(seen, "; "))
	if bound > 0 {
		t.Errorf("gang of 4 (minCount 4) against a quota of 3: %d members bound, want none", bound)
	}

	// (b) The reverted members must not be counted: 3 fit.
	start := time.Now()
	three := e.createGang(gang{name: "three", size: 3, mutate: gpuGangMember})
	placed := e.waitScheduled(three...)
	t.Logf("gang of 3: bound within %v; per node %v", time.Since(start).Round(10*time.Millisecond), e.gangPerNode(e.nodes, "three"))

	// (c) 3 of 3 are used by bound pods now.
	two := e.createGang(gang{name: "two", size: 2, mutate: gpuGangMember})
	bound, seen = e.waitGangHeld("two", two, full)
	t.Logf("gang of 2: %d bound; %s", bound, strings.Join(seen, "; "))
	if bound > 0 {
		t.Errorf("gang of 2 with 3 of 3 used: %d members bound, want none", bound)
	}

	end := e.mustState(e.teamA, npqGangRole)
	e.holds(e.teamA, npqGangRole, end.bound, 2*time.Second, "after the gangs")
	peak := samples.finish()
	t.Logf("end: %d bound, %d pending, at most %d bound at any sample; bound over time: %s",
		len(end.bound), len(end.pending), peak, strings.Join(samples.changes, " "))
	if len(end.bound) != 3 {
		t.Errorf("%d gang pods bound at the end, want 3 (the gang of 3): %v", len(end.bound), end.bound)
	}
	for name := range placed {
		if _, ok := end.bound[name]; !ok {
			t.Errorf("pod %s of the gang of 3 is no longer bound", name)
		}
	}
	if peak > 3 {
		t.Errorf("%d gang pods were bound at one sample, above the quota of 3", peak)
	}
}
