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
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	"github.com/adminsched/scheduler-plugins/pkg/generated/informers/externalversions"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// TestNodePoolQuotaAPI installs manifests/crds and checks that the API
// server takes a valid NodePoolQuota, refuses what the schema forbids with
// the schema's messages, publishes the field descriptions to kubectl
// explain, and serves the generated clientset and informers.
func TestNodePoolQuotaAPI(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), logger), 2*time.Minute)
	defer cancel()
	installNodePoolQuotaCRD(ctx, t)
	clientset := framework.NodePoolQuotaClient(adminConfig)
	client := clientset.SchedulingV1alpha1().NodePoolQuotas()
	// The objects are cluster-scoped in a shared cluster: one suffix for this run.
	suffix := rand.String(5)

	// Started before the first object exists, so that it sees the add and
	// the status update as watch events, as the plugin's informer does.
	factory := externalversions.NewSharedInformerFactory(clientset, 0)
	lister := factory.Scheduling().V1alpha1().NodePoolQuotas().Lister()
	informerCtx, stopInformers := context.WithCancel(ctx)
	// Shutdown waits for the informers, which end when they are stopped.
	defer factory.Shutdown()
	defer stopInformers()
	factory.Start(informerCtx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("the informer of %v did not sync", typ)
		}
	}

	t.Run("valid", func(t *testing.T) {
		q := validNodePoolQuota("valid-" + suffix)
		created, err := client.Create(ctx, q, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating a valid NodePoolQuota: %v", err)
		}
		t.Cleanup(func() { _ = client.Delete(context.Background(), q.Name, metav1.DeleteOptions{}) })
		got, err := client.Get(ctx, q.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if gpus := got.Spec.Teams[0].Limits["nvidia.com/gpu"]; gpus.Cmp(resource.MustParse("64")) != 0 {
			t.Errorf("read back team-a's nvidia.com/gpu limit %s, want 64", gpus.String())
		}

		got.Status = v1alpha1.NodePoolQuotaStatus{
			ObservedGeneration: got.Generation, Nodes: 8, TeamCount: 2, HeldPods: 3,
			Teams: []v1alpha1.TeamUsage{{Name: "team-a", Held: 3, Used: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("64")},
				OverLimit: []corev1.ResourceName{"nvidia.com/gpu"}}},
		}
		updated, err := client.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("updating the status: %v", err)
		}
		if updated.Status.Nodes != 8 || len(updated.Status.Teams) != 1 || updated.Status.Teams[0].Held != 3 {
			t.Errorf("status after UpdateStatus = %+v, want nodes 8 and team-a holding 3", updated.Status)
		}
		if updated.Generation != created.Generation {
			t.Errorf("generation went from %d to %d on a status update, want it unchanged", created.Generation, updated.Generation)
		}
		// The status subresource: an update of the object leaves status alone.
		updated.Status.Nodes = 99
		updated.Spec.Teams[1].Limits[corev1.ResourceCPU] = resource.MustParse("64")
		again, err := client.Update(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if again.Status.Nodes != 8 || again.Generation != created.Generation+1 {
			t.Errorf("after an update of spec and status: nodes %d, generation %d; want the status kept (8) and generation %d",
				again.Status.Nodes, again.Generation, created.Generation+1)
		}

		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			seen, err := lister.Get(q.Name)
			return err == nil && seen.ResourceVersion == again.ResourceVersion, nil
		})
		if err != nil {
			t.Errorf("the informer did not see resourceVersion %s of %s: %v", again.ResourceVersion, q.Name, err)
		}
	})

	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.NodePoolQuota)
		// body, if set, is sent as is: Go's JSON omits an empty namespaces list.
		body string
		// want are pieces of the API server's message: the field and the rule.
		want []string
	}{{
		name:   "team without namespaces",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[0].Namespaces = nil },
		want:   []string{"spec.teams[0]", "a team needs namespaces or a namespaceSelector"},
	}, {
		name: "team with an empty list of namespaces",
		body: `{"apiVersion":"scheduling.adminsched.io/v1alpha1","kind":"NodePoolQuota","metadata":{"name":"%s"},
			"spec":{"nodeSelector":{},"teams":[{"name":"team-a","namespaces":[],"limits":{"cpu":"1"}}]}}`,
		want: []string{"spec.teams[0]", "a team needs namespaces or a namespaceSelector"},
	}, {
		name:   "bad team name",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[0].Name = "Team_A" },
		want:   []string{"spec.teams[0].name", "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"},
	}, {
		name:   "two teams with one name",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[1].Name = q.Spec.Teams[0].Name },
		want:   []string{"spec.teams[1]", `Duplicate value: {"name":"team-a"}`},
	}, {
		name:   "no teams",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams = []v1alpha1.TeamQuota{} },
		want:   []string{"spec.teams", "should have at least 1 items"},
	}, {
		name:   "teams null",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams = nil },
		want:   []string{"spec.teams", "Required value"},
	}, {
		name:   "no limits",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[1].Limits = corev1.ResourceList{} },
		want:   []string{"spec.teams[1].limits", "should have at least 1 properties"},
	}, {
		name:   "limits null",
		mutate: func(q *v1alpha1.NodePoolQuota) { q.Spec.Teams[1].Limits = nil },
		want:   []string{"spec.teams[1].limits", "Required value"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			name := "invalid-" + suffix
			var err error
			if tc.body != "" {
				err = clientset.SchedulingV1alpha1().RESTClient().Post().Resource("nodepoolquotas").Body([]byte(fmt.Sprintf(tc.body, name))).Do(ctx).Error()
			} else {
				q := validNodePoolQuota(name)
				tc.mutate(q)
				_, err = client.Create(ctx, q, metav1.CreateOptions{})
			}
			if err == nil {
				_ = client.Delete(context.Background(), name, metav1.DeleteOptions{})
				t.Fatalf("the API server took it, want it refused with %q", tc.want)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want an Invalid error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the API server's message %q does not contain %q", err.Error(), w)
				}
			}
		})
	}

	t.Run("kubectl explain", func(t *testing.T) {
		kubectl := toolBinary(t, "KUBECTL", "kubectl", "this test runs kubectl explain")
		const want = "Limits is, per resource, the most that the team's pods on the pool's"
		var out []byte
		// The API server publishes a new CRD's OpenAPI a moment after it is established.
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			out, _ = exec.CommandContext(ctx, kubectl, "--kubeconfig", adminKubeconfig,
				"explain", "nodepoolquota.spec.teams.limits").CombinedOutput()
			return strings.Contains(string(out), want), nil
		})
		if err != nil {
			t.Errorf("kubectl explain nodepoolquota.spec.teams.limits printed:\n%s\nwant the field's description (%q)", out, want)
		}
	})
}

// installNodePoolQuotaCRD installs manifests/crds, built by kustomize as a
// user applies it, until t ends: the cluster is shared.
func installNodePoolQuotaCRD(ctx context.Context, t *testing.T) {
	t.Helper()
	names := framework.InstallKustomizedCRDs(ctx, t, adminConfig, "../../manifests/crds")
	if want := "nodepoolquotas." + v1alpha1.GroupName; len(names) != 1 || names[0] != want {
		t.Fatalf("manifests/crds has the CRDs %v, want %s only", names, want)
	}
}

// validNodePoolQuota is a quota the API server takes: two teams, one by
// namespace names and one by a namespace selector.
func validNodePoolQuota(name string) *v1alpha1.NodePoolQuota {
	return &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "h100"}},
			Teams: []v1alpha1.TeamQuota{{
				Name:       "team-a",
				Namespaces: []string{"a-train", "a-serve"},
				Limits:     corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("64"), corev1.ResourceCPU: resource.MustParse("512")},
			}, {
				Name:              "team-b",
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
				Limits:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("128")},
			}},
		},
	}
}
