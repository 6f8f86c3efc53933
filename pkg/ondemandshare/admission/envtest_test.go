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

package admission

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/pkg/admissionpolicy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// startAPIServer starts a control plane whose API server applies
// MutatingAdmissionPolicies (on 1.35 with the gate and v1beta1 switched on,
// as localcluster.WithMutatingAdmissionPolicy does), from KUBEBUILDER_ASSETS
// or the repository's bin/.
func startAPIServer(t *testing.T) kubernetes.Interface {
	t.Helper()
	assets, err := localcluster.AssetsFromEnv("../../../bin")
	if err != nil {
		t.Fatalf("this test needs a real control plane: %v", err)
	}
	cp, err := localcluster.Start(assets, t.TempDir(), localcluster.WithMutatingAdmissionPolicy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	return kubernetes.NewForConfigOrDie(cp.Config)
}

func owner(apiVersion, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: types.UID("uid-" + kind), Controller: ptr.To(true)}
}

var (
	replicaSet = owner("apps/v1", "ReplicaSet")
	daemonSet  = owner("apps/v1", "DaemonSet")
	job        = owner("batch/v1", "Job")
)

// admitted is what the policies wrote into a pod: its gates and its policy
// label ("" without one).
type admitted struct {
	Gates  []string
	Policy string
}

// TestAdmissionGatesAndLabels renders two policies of two profiles, lets
// the API server admit a table of pods with them (dry-run creates, so that
// nothing else acts on the pods), and checks each pod's gates and policy
// label.
func TestAdmissionGatesAndLabels(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := startAPIServer(t)
	suffix := rand.String(5)
	shop, data, excluded := "shop-"+suffix, "data-"+suffix, "ops-"+suffix
	for ns, labels := range map[string]map[string]string{shop: nil, data: {"team": "data"}, excluded: {"team": "data"}} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	alpha := config.OnDemandSharePolicy{Name: "alpha-" + suffix, Namespaces: []string{shop, data},
		PodSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		WorkloadKinds: []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet}}
	beta := config.OnDemandSharePolicy{Name: "beta-" + suffix,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "data"}},
		WorkloadKinds:     []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadJob}}
	web, batch := "web-"+suffix, "batch-"+suffix
	res, err := Render([]ProfileArgs{
		{SchedulerName: web, Args: &config.OnDemandShareArgs{ExcludedNamespaces: []string{excluded}, Policies: []config.OnDemandSharePolicy{beta, alpha}}},
		{SchedulerName: batch, Args: &config.OnDemandShareArgs{ExcludedNamespaces: []string{excluded}, Policies: []config.OnDemandSharePolicy{beta}}},
	}, Options{FailurePolicy: admissionpolicy.Fail})
	if err != nil {
		t.Fatal(err)
	}
	if err := admissionpolicy.Apply(ctx, client, res.Pairs()); err != nil {
		t.Fatal(err)
	}
	waitInForce(ctx, t, client, shop)

	type pod struct {
		name, namespace, scheduler, nodeName string
		labels                               map[string]string
		owner                                *metav1.OwnerReference
		gates                                []string
	}
	admit := func(t *testing.T, p pod) admitted {
		t.Helper()
		obj := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.namespace, Labels: p.labels},
			Spec: v1.PodSpec{SchedulerName: p.scheduler, NodeName: p.nodeName,
				Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if p.owner != nil {
			obj.OwnerReferences = []metav1.OwnerReference{*p.owner}
		}
		for _, g := range p.gates {
			obj.Spec.SchedulingGates = append(obj.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
		}
		got, err := client.CoreV1().Pods(p.namespace).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("creating pod %s: %v", p.name, err)
		}
		var a admitted
		for _, g := range got.Spec.SchedulingGates {
			a.Gates = append(a.Gates, g.Name)
		}
		a.Policy = got.Labels[share.PolicyLabel]
		return a
	}
	webLabels := map[string]string{"app": "web"}
	gated := func(policy string, others ...string) admitted {
		return admitted{Gates: append(others, share.SchedulingGate), Policy: policy}
	}
	tests := []struct {
		pod  pod
		want admitted
	}{
		{pod{name: "replicaset-pod", namespace: shop, scheduler: web, labels: webLabels, owner: &replicaSet}, gated(alpha.Name)},
		{pod{name: "bound", namespace: shop, scheduler: web, labels: webLabels, owner: &replicaSet, nodeName: "node-1"}, admitted{}},
		{pod{name: "daemonset-pod", namespace: shop, scheduler: web, labels: webLabels, owner: &daemonSet}, admitted{}},
		{pod{name: "no-controller", namespace: shop, scheduler: web, labels: webLabels}, admitted{}},
		{pod{name: "other-scheduler", namespace: shop, scheduler: "default-scheduler", labels: webLabels, owner: &replicaSet}, admitted{}},
		{pod{name: "excluded-namespace", namespace: excluded, scheduler: web, labels: webLabels, owner: &replicaSet}, admitted{}},
		{pod{name: "pod-selector-does-not-match", namespace: shop, scheduler: web, labels: map[string]string{"app": "db"}, owner: &replicaSet}, admitted{}},
		{pod{name: "kind-not-counted", namespace: shop, scheduler: web, labels: webLabels, owner: &job}, admitted{}},
		{pod{name: "another-gate", namespace: shop, scheduler: web, labels: webLabels, owner: &replicaSet, gates: []string{"example.com/queue"}},
			gated(alpha.Name, "example.com/queue")},
		{pod{name: "our-gate-already", namespace: shop, scheduler: web, labels: webLabels, owner: &replicaSet, gates: []string{share.SchedulingGate}},
			gated(alpha.Name)},
		{pod{name: "labelled-already", namespace: shop, scheduler: web, labels: map[string]string{"app": "web", share.PolicyLabel: "x"}, owner: &replicaSet},
			admitted{Policy: "x"}},
		{pod{name: "no-labels", namespace: data, scheduler: web, owner: &replicaSet}, gated(beta.Name)},
		{pod{name: "job-of-the-other-profile", namespace: data, scheduler: batch, labels: webLabels, owner: &job}, gated(beta.Name)},
		{pod{name: "alpha-does-not-count-jobs", namespace: data, scheduler: web, labels: webLabels, owner: &job}, gated(beta.Name)},
		{pod{name: "batch-profile-lacks-alpha", namespace: data, scheduler: batch, labels: webLabels, owner: &replicaSet}, gated(beta.Name)},
	}
	for _, tt := range tests {
		t.Run(tt.pod.name, func(t *testing.T) {
			if got := admit(t, tt.pod); !equal(got, tt.want) {
				t.Errorf("admitted with %+v, want %+v", got, tt.want)
			}
		})
	}

	// Both select it: the API server runs the policies in no set order, and
	// whichever runs first, the pod is the first's by name, gated once.
	both := pod{name: "both", namespace: data, scheduler: web, labels: webLabels, owner: &replicaSet}
	t.Run("selected by both", func(t *testing.T) {
		for i := range 10 {
			both.name = fmt.Sprintf("both-%d", i)
			if got, want := admit(t, both), gated(alpha.Name); !equal(got, want) {
				t.Errorf("pod %s admitted with %+v, want %+v", both.name, got, want)
			}
		}
	})

	// Without alpha's policy, beta still passes over alpha's pods: it does
	// not rely on running after alpha.
	t.Run("the later policy alone", func(t *testing.T) {
		if err := admissionpolicy.Delete(ctx, client, res.Pairs()[:1]); err != nil {
			t.Fatal(err)
		}
		waitInForce(ctx, t, client, shop)
		if got := admit(t, both); !equal(got, admitted{}) {
			t.Errorf("a pod alpha selects, admitted without alpha's policy with %+v, want nothing", got)
		}
		if got, want := admit(t, tests[len(tests)-1].pod), gated(beta.Name); !equal(got, want) {
			t.Errorf("a pod of beta alone, admitted with %+v, want %+v", got, want)
		}
	})
}

func equal(a, b admitted) bool { return a.Policy == b.Policy && slices.Equal(a.Gates, b.Gates) }

func waitInForce(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	if err := Renderer.WaitInForce(ctx, client, ns, time.Minute); err != nil {
		t.Fatal(err)
	}
}
