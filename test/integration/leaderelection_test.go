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

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// TestLeaderElection runs two instances of the binary with leader election on
// a lease of their own: exactly one schedules; when it stops, the other takes
// over and schedules the pods that wait.
func TestLeaderElection(t *testing.T) {
	tc := newTestContext(t)
	tc.createNodes(makeNode("le-a"), makeNode("le-b"))
	config := nodeLessPodsConfig(nil)
	config.LeaderElection = componentbaseconfigv1alpha1.LeaderElectionConfiguration{
		LeaderElect:       ptr.To(true),
		ResourceName:      "custom-scheduler",
		ResourceNamespace: tc.ns,
		LeaseDuration:     metav1.Duration{Duration: 4 * time.Second},
		RenewDeadline:     metav1.Duration{Duration: 3 * time.Second},
		RetryPeriod:       metav1.Duration{Duration: 500 * time.Millisecond},
	}
	configPath := testconfig.Write(t, config)

	var instances []*framework.Process
	for _, name := range []string{"scheduler-1", "scheduler-2"} {
		args, _ := tc.servingArgs()
		instances = append(instances, tc.runBinary(name, append(args, "--config="+configPath, "--v=2")...))
	}
	leader := tc.waitForLeader(instances)
	var follower *framework.Process
	for _, p := range instances {
		if p != leader {
			follower = p
		}
	}

	for i := range 3 {
		tc.createPod(tc.makePod(fmt.Sprintf("led-%d", i)))
	}
	tc.waitScheduled("led-0", "led-1", "led-2")
	if bound := boundPods(follower.Output()); len(bound) != 0 {
		t.Errorf("%s is not the leader but bound %v", follower.Name, bound)
	}
	if bound := tc.waitBoundInLog(leader, 3); len(bound) != 3 {
		t.Errorf("leader %s bound %v, want the 3 pods", leader.Name, bound)
	}

	lease, err := adminClient.CoordinationV1().Leases(tc.ns).Get(tc.ctx, "custom-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the scheduler's own lease: %v", err)
	}
	if _, err := adminClient.CoordinationV1().Leases("kube-system").Get(tc.ctx, "kube-scheduler", metav1.GetOptions{}); err == nil {
		t.Errorf("the default scheduler's lease kube-system/kube-scheduler exists: ours must not touch it")
	}
	t.Logf("lease held by %s", *lease.Spec.HolderIdentity)

	leader.Stop()
	for i := range 3 {
		tc.createPod(tc.makePod(fmt.Sprintf("after-failover-%d", i)))
	}
	tc.waitScheduled("after-failover-0", "after-failover-1", "after-failover-2")
	if bound := tc.waitBoundInLog(follower, 3); len(bound) != 3 {
		t.Errorf("after failover %s bound %v, want the 3 new pods", follower.Name, bound)
	}
}

// waitBoundInLog waits until p's log reports want bound pods and returns
// what it reports. The scheduler logs a binding after the API server has it,
// and its output reaches the test through a pipe: a pod seen bound may not
// be in the log yet.
func (tc *testContext) waitBoundInLog(p *framework.Process, want int) []string {
	tc.t.Helper()
	var bound []string
	_ = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		bound = boundPods(p.Output())
		return len(bound) >= want, nil
	})
	return bound
}

// waitForLeader returns the instance that acquired the lease; it fails if
// both did or an instance exited.
func (tc *testContext) waitForLeader(instances []*framework.Process) *framework.Process {
	tc.t.Helper()
	var leaders []*framework.Process
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		leaders = nil
		for _, p := range instances {
			if p.Exited() {
				return false, fmt.Errorf("%s exited", p.Name)
			}
			if strings.Contains(p.Output(), "Successfully acquired lease") {
				leaders = append(leaders, p)
			}
		}
		return len(leaders) > 0, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for a leader: %v", err)
	}
	if len(leaders) != 1 {
		tc.t.Fatalf("%d instances hold the lease, want 1", len(leaders))
	}
	return leaders[0]
}

// boundPods returns the pods a scheduler's log says it bound.
func boundPods(log string) []string {
	var pods []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "Successfully bound pod to node") {
			continue
		}
		if i := strings.Index(line, "pod=\""); i >= 0 {
			rest := line[i+len("pod=\""):]
			pods = append(pods, rest[:strings.IndexByte(rest, '"')])
		}
	}
	return pods
}
