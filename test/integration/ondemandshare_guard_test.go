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

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// guardPoolLabel keeps each workload of TestOnDemandShareGuard to its own
// nodes (NodeAffinity filters before the guard).
const guardPoolLabel = "ondemandshare-guard.adminsched.io/pool"

// TestOnDemandShareGuard runs the scheduler binary with the OnDemandShare
// guard and neither the admission policy nor the controller, as when the
// decider is down or installed after the pods (kep/46-on-demand-share
// README, section 6f): every pod reaches the scheduler undecided. Under a
// 30% policy, a Deployment of 10 pods made by the real Deployment and
// ReplicaSet controllers ends with at least 3 on on-demand nodes, and a
// 1-replica Deployment goes on-demand, although their pods prefer spot. A 1-replica Deployment whose nodes
// are all spot stays Pending, with a FailedScheduling event that names the
// policy. ondemandshare_undecided_pods_total counts the 11 pods placed, not
// the Pending one.
func TestOnDemandShareGuard(t *testing.T) {
	tc := newTestContext(t)
	suffix := rand.String(5)
	pool := func(p string, class share.Class) nodeOption {
		return withLabels(map[string]string{guardPoolLabel: p, capacityTypeLabel: string(class)})
	}
	for i := range 3 {
		tc.createNodes(makeNode(fmt.Sprintf("guard-od-%d-%s", i, suffix), pool("main", share.OnDemand)),
			makeNode(fmt.Sprintf("guard-spot-%d-%s", i, suffix), pool("main", share.Spot)))
	}
	tc.createNodes(makeNode("guard-only-spot-"+suffix, pool("spot-only", share.Spot)))

	policyName := "guard-" + suffix
	cfg := tc.guardConfig(policyName)
	token := tc.metricsToken()
	serving, port := tc.servingArgs()
	tc.runBinary("guard-scheduler", append([]string{"--config=" + testconfig.Write(t, cfg),
		"--authentication-kubeconfig=" + adminKubeconfig, "--authorization-kubeconfig=" + adminKubeconfig}, serving...)...)
	checkReadyz(t, tc.ctx, port)

	r := &shareRun{tc: tc}
	for _, w := range []struct {
		name, pool string
		replicas   int32
	}{{"web", "main", 10}, {"single", "main", 1}, {"stuck", "spot-only", 1}} {
		d := r.deployment(w.name, w.replicas)
		d.Spec.Template.Spec.NodeSelector = map[string]string{guardPoolLabel: w.pool}
		preferSpot(&d.Spec.Template.Spec)
		if _, err := adminClient.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []struct {
		app          string
		replicas     int
		wantOnDemand int
	}{{"web", 10, 3}, {"single", 1, 1}} {
		st := r.guarded(t, w.app, w.replicas)
		t.Logf("%s: %d of %d pods on-demand", w.app, st.onDemand, w.replicas)
		if st.onDemand < w.wantOnDemand {
			t.Errorf("%s: %d of %d pods on on-demand nodes, want at least %d (30%%, rounded up)", w.app, st.onDemand, w.replicas, w.wantOnDemand)
		}
	}

	pods, err := adminClient.CoreV1().Pods(tc.ns).List(tc.ctx, metav1.ListOptions{LabelSelector: "app=stuck"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the stuck Deployment's pods: %v (err %v), want one", pods, err)
	}
	stuck := pods.Items[0].Name
	msg := tc.failedSchedulingMessage(stuck)
	if want := fmt.Sprintf("node(s) are not on-demand: policy %q has 0/1 replicas on-demand", policyName); !strings.Contains(msg, want) {
		t.Errorf("FailedScheduling message of %s: %q, want it to contain %q", stuck, msg, want)
	}
	if p, err := adminClient.CoreV1().Pods(tc.ns).Get(tc.ctx, stuck, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Errorf("pod %s: bound to %q (err %v), want it Pending: its only nodes are spot", stuck, p.Spec.NodeName, err)
	}

	series := map[string]string{"profile": schedulerName, "policy": policyName}
	var got float64
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		s, _, err := scrapeMetrics(ctx, port, token)
		if err != nil {
			return false, nil
		}
		v, ok := s.value("ondemandshare_undecided_pods_total", series)
		got = v
		return ok && v == 11, nil
	})
	if err != nil {
		t.Errorf("ondemandshare_undecided_pods_total%v = %v, want 11 (the pods placed; the Pending one is not): %v", series, got, err)
	}
}

// guarded waits until app's replicas pods are all bound and returns their
// state; it fails if a pod carries a decision, since nothing decides here.
func (r *shareRun) guarded(t *testing.T, app string, replicas int) shareState {
	t.Helper()
	var st shareState
	err := wait.PollUntilContextTimeout(r.tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		st, err = r.state(ctx, app)
		return err == nil && st.pods == replicas && st.bound == replicas, nil
	})
	if err != nil {
		t.Fatalf("%s: want %d pods bound; have %+v: %v", app, replicas, st, err)
	}
	// state reports every pod whose class label is not its node's class:
	// undecided pods have none, so all of them.
	if len(st.mismatched) != replicas {
		t.Errorf("%s: %d of %d pods undecided, want all: %v", app, len(st.mismatched), replicas, st.mismatched)
	}
	return st
}

// preferSpot makes a pod prefer spot nodes through in-tree NodeAffinity:
// without the guard, none of its workload's pods would go on-demand.
func preferSpot(spec *v1.PodSpec) {
	spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 100, Preference: v1.NodeSelectorTerm{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: capacityTypeLabel, Operator: v1.NodeSelectorOpIn, Values: []string{string(share.Spot)}}},
		}}},
	}}
}

// guardConfig is a profile of our scheduler with the OnDemandShare guard
// and one policy, named name, that holds 30% of each workload of the
// test's namespace on-demand.
func (tc *testContext) guardConfig(name string) *configv1.KubeSchedulerConfiguration {
	return schedulerConfig(configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		Plugins:       &configv1.Plugins{MultiPoint: testconfig.Plugins(2, "OnDemandShare")},
		PluginConfig: []configv1.PluginConfig{testconfig.Args("OnDemandShare", &v1config.OnDemandShareArgs{
			Policies: []v1config.OnDemandSharePolicy{{Name: name, Namespaces: []string{tc.ns}, MinOnDemandPercent: ptr.To[int32](30)}},
		})}})
}
