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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/util/retry"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	v1config "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	odsadmission "github.com/adminsched/scheduler-plugins/pkg/ondemandshare/admission"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/controller"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const capacityTypeLabel = "karpenter.sh/capacity-type"

// shareRun is a test's on-demand share set up on the shared cluster: three
// on-demand and three spot nodes, a scheduler profile whose args hold the
// policy, its admission policy in force, and the controller running
// in-process.
type shareRun struct {
	tc     *testContext
	policy *policy.Policy
	spot   []string
}

// startShare sets up policy (its namespaces are set to the test's).
func startShare(t *testing.T, tc *testContext, p v1config.OnDemandSharePolicy) *shareRun {
	t.Helper()
	if !kubeversion.Has(kubeversion.MutatingAdmissionPolicyV1) {
		// The shared cluster does not turn on 1.35's beta API.
		t.Skipf("%s", kubeversion.Unavailable(kubeversion.MutatingAdmissionPolicyV1).Error())
	}
	suffix := rand.String(5)
	var spot []string
	for _, class := range []string{"on-demand", "spot"} {
		for i := range 3 {
			name := tc.createNodes(makeNode(fmt.Sprintf("%s-%d-%s", class, i, suffix),
				withLabels(map[string]string{capacityTypeLabel: class})))[0]
			if class == "spot" {
				spot = append(spot, name)
			}
		}
	}
	p.Namespaces = []string{tc.ns}
	cfg := schedulerConfig(configv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(schedulerName),
		PluginConfig:  []configv1.PluginConfig{testconfig.Args("OnDemandShare", &v1config.OnDemandShareArgs{Policies: []v1config.OnDemandSharePolicy{p}})},
	})
	tc.startScheduler(cfg)
	// Loaded as the controller loads the scheduler's file: the scheduler
	// itself keeps only the args of the plugins it runs.
	loaded, err := admissionpolicy.LoadConfig(testconfig.Write(t, cfg), func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := odsadmission.FromConfig(loaded)
	if err != nil {
		t.Fatal(err)
	}
	res, err := odsadmission.Render(profiles, odsadmission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := admissionpolicy.Delete(context.Background(), adminClient, res.Pairs()); err != nil {
			t.Errorf("deleting the admission policies: %v", err)
		}
	})
	if err := admissionpolicy.Apply(tc.ctx, adminClient, res.Pairs()); err != nil {
		t.Fatal(err)
	}
	if err := odsadmission.Renderer.WaitInForce(tc.ctx, adminClient, tc.ns, waitTimeout); err != nil {
		t.Fatal(err)
	}
	policies, err := policy.Compile(profiles[0].Args)
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(adminClient, 0)
	ctrl, err := controller.New(adminClient, factory, policies)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tc.ctx)
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	return &shareRun{tc: tc, policy: policies[0], spot: spot}
}

// shareState is what a workload's pods look like at one moment.
type shareState struct {
	pods, bound, onDemand, gated int
	// mismatched are pods whose class label says one class and whose node
	// is of the other.
	mismatched []string
}

func (r *shareRun) state(ctx context.Context, app string) (shareState, error) {
	var st shareState
	pods, err := adminClient.CoreV1().Pods(r.tc.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return st, err
	}
	nodes, err := adminClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: capacityTypeLabel})
	if err != nil {
		return st, err
	}
	classOf := map[string]string{}
	for _, n := range nodes.Items {
		classOf[n.Name] = n.Labels[capacityTypeLabel]
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		st.pods++
		if len(p.Spec.SchedulingGates) > 0 {
			st.gated++
		}
		if p.Spec.NodeName == "" {
			continue
		}
		st.bound++
		class := classOf[p.Spec.NodeName]
		if class == string(share.OnDemand) {
			st.onDemand++
		}
		if label := p.Labels[share.ClassLabel]; label != class {
			st.mismatched = append(st.mismatched, fmt.Sprintf("%s: class %q on a %q node", p.Name, label, class))
		}
	}
	return st, nil
}

// settle waits until the workload has want pods, none gated, and bound
// pods as many as bound, and returns the state.
func (r *shareRun) settle(t *testing.T, app string, want, bound int) shareState {
	t.Helper()
	var st shareState
	err := wait.PollUntilContextTimeout(r.tc.ctx, pollInterval, 2*waitTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		st, err = r.state(ctx, app)
		return err == nil && st.pods == want && st.gated == 0 && st.bound == bound, nil
	})
	if err != nil {
		t.Fatalf("%s: want %d pods, %d bound, none gated; have %+v: %v", app, want, bound, st, err)
	}
	if len(st.mismatched) > 0 {
		t.Errorf("%s: pods on a node of another class than decided: %v", app, st.mismatched)
	}
	return st
}

func (r *shareRun) deployment(name string, replicas int32) *appsv1.Deployment {
	pod := r.tc.makePod(name)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.tc.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intOrZero()), MaxSurge: ptr.To(intOrPercent("25%"))}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
}

func (r *shareRun) scale(t *testing.T, name string, replicas int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := adminClient.AppsV1().Deployments(r.tc.ns).GetScale(r.tc.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = adminClient.AppsV1().Deployments(r.tc.ns).UpdateScale(r.tc.ctx, name, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOnDemandShareHoldsTheMinimum runs a Deployment at a 30% minimum on
// demand through the real Deployment and ReplicaSet controllers, the
// rendered admission policy, the controller and our scheduler: a burst of
// 50 pods lands exactly 15 on-demand; scaled to 10, 20 and 5 the workload
// holds exactly 3, 6 and 2 (the ReplicaSet deletes the highest slots
// first, by their deletion cost); after a rollout, the new ReplicaSet
// holds exactly the minimum; with its spot nodes deleted, the on-demand
// pods stay and the spot replacements wait for spot.
func TestOnDemandShareHoldsTheMinimum(t *testing.T) {
	tc := newTestContext(t)
	r := startShare(t, tc, v1config.OnDemandSharePolicy{Name: "web-" + rand.String(5), MinOnDemandPercent: ptr.To[int32](30)})
	d := r.deployment("web", 50)
	if _, err := adminClient.AppsV1().Deployments(tc.ns).Create(tc.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		replicas int32
		onDemand int
	}{{50, 15}, {10, 3}, {20, 6}, {5, 2}} {
		if step.replicas != 50 {
			r.scale(t, "web", step.replicas)
		}
		st := r.settle(t, "web", int(step.replicas), int(step.replicas))
		t.Logf("%d replicas: %d on-demand", step.replicas, st.onDemand)
		if st.onDemand != step.onDemand || int32(st.onDemand) != r.policy.Required(step.replicas) {
			t.Errorf("%d replicas: %d on-demand, want exactly %d", step.replicas, st.onDemand, step.onDemand)
		}
	}

	// A rollout to a new template: the new ReplicaSet's slots start at 1,
	// so it is decided on-demand first.
	r.scale(t, "web", 10)
	r.settle(t, "web", 10, 10)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := adminClient.AppsV1().Deployments(tc.ns).Get(tc.ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Template.Annotations = map[string]string{"version": "2"}
		_, err = adminClient.AppsV1().Deployments(tc.ns).Update(tc.ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lowest := 10
	err = wait.PollUntilContextTimeout(tc.ctx, pollInterval, 2*waitTimeout, true, func(ctx context.Context) (bool, error) {
		st, err := r.state(ctx, "web")
		if err != nil {
			return false, nil
		}
		lowest = min(lowest, st.onDemand)
		d, err := adminClient.AppsV1().Deployments(tc.ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		done := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == 10 && d.Status.Replicas == 10 && d.Status.AvailableReplicas == 10
		return done && st.pods == 10 && st.bound == 10, nil
	})
	if err != nil {
		t.Fatalf("rollout: %v", err)
	}
	st := r.settle(t, "web", 10, 10)
	t.Logf("rollout: %d on-demand at the end, %d at the lowest sample", st.onDemand, lowest)
	if st.onDemand != 3 {
		t.Errorf("after the rollout: %d on-demand, want exactly 3", st.onDemand)
	}

	// Spot reclaimed: its nodes and their pods go; the 7 spot replacements
	// are decided spot again and wait, the 3 on-demand pods stay.
	for _, n := range r.spot {
		if err := adminClient.CoreV1().Nodes().Delete(tc.ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		pods, err := adminClient.CoreV1().Pods(tc.ns).List(tc.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			tc.deletePod(tc.ns, p.Name)
		}
	}
	st = r.settle(t, "web", 10, 3)
	if st.onDemand != 3 {
		t.Errorf("after the spot nodes went: %d on-demand, want the 3 to stay", st.onDemand)
	}
}

func intOrZero() intstr.IntOrString { return intstr.FromInt32(0) }

func intOrPercent(s string) intstr.IntOrString { return intstr.FromString(s) }
