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

package nodepoolquota

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
	fakequotas "github.com/adminsched/scheduler-plugins/pkg/generated/clientset/versioned/fake"
)

// activations records the pods a handle was asked to activate.
type activations struct {
	fwk.Handle
	mu   sync.Mutex
	pods []string
}

func (a *activations) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key := range pods {
		a.pods = append(a.pods, key)
	}
}

func (a *activations) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.pods...)
}

// newHandle is a framework handle over a fake cluster holding objs, its
// informers started.
func newHandle(t *testing.T, ctx context.Context, objs ...*v1.Pod) (*activations, informers.SharedInformerFactory) {
	t.Helper()
	client := fake.NewClientset()
	for _, o := range objs {
		if _, err := client.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	f, err := frameworkruntime.NewFramework(ctx, nil, &schedconfig.KubeSchedulerProfile{SchedulerName: uniqueProfile(t)},
		frameworkruntime.WithInformerFactory(factory), frameworkruntime.WithSnapshotSharedLister(schedcache.NewEmptySnapshot()))
	if err != nil {
		t.Fatal(err)
	}
	return &activations{Handle: f}, factory
}

// quotaClient is a fake NodePoolQuota client whose discovery serves the
// resource when served is true.
func quotaClient(served bool, objs ...*v1alpha1.NodePoolQuota) *fakequotas.Clientset {
	var in []runtime.Object
	for _, o := range objs {
		in = append(in, o)
	}
	c := fakequotas.NewSimpleClientset(in...)
	if served {
		c.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
			GroupVersion: v1alpha1.SchemeGroupVersion.String(),
			APIResources: []metav1.APIResource{{Name: "nodepoolquotas", Kind: "NodePoolQuota"}},
		}}
	}
	return c
}

// lateDiscovery is an API server's discovery right after the CRD was
// applied: it does not list NodePoolQuotas until its calls-th call.
type lateDiscovery struct {
	discovery.DiscoveryInterface
	mu    sync.Mutex
	calls int
}

func (d *lateDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	d.calls++
	calls := d.calls
	d.mu.Unlock()
	if calls < 3 {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: v1alpha1.GroupName}, gv)
	}
	return d.DiscoveryInterface.ServerResourcesForGroupVersion(gv)
}

// lateClient is a quota client whose discovery is late.
type lateClient struct {
	*fakequotas.Clientset
	disc *lateDiscovery
}

func (c lateClient) Discovery() discovery.DiscoveryInterface { return c.disc }

// TestNewWaitsForDiscovery: a CRD applied just before the scheduler starts
// is Established before discovery lists it; New waits for discovery
// instead of refusing to start (as the harness of scheduler_perf saw on a
// loaded machine).
func TestNewWaitsForDiscovery(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h, _ := newHandle(t, ctx)
	served := quotaClient(true)
	disc := &lateDiscovery{DiscoveryInterface: served.Discovery()}
	if _, err := newWithClient(ctx, h, lateClient{Clientset: served, disc: disc}); err != nil {
		t.Fatalf("discovery listing NodePoolQuotas at its third call: %v, want New to wait for it", err)
	}
	if disc.calls != 3 {
		t.Errorf("discovery called %d times, want 3", disc.calls)
	}
}

func TestNewNeedsTheCRD(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	h, _ := newHandle(t, ctx)
	saved := servedTimeout
	servedTimeout = 600 * time.Millisecond
	t.Cleanup(func() { servedTimeout = saved })
	_, err := newWithClient(ctx, h, quotaClient(false))
	if err == nil || !strings.Contains(err.Error(), "manifests/crds/scheduling.adminsched.io_nodepoolquotas.yaml") {
		t.Errorf("without the CRD: err %v, want one naming the CRD manifest", err)
	}
	if _, err := New(ctx, nil, h); err == nil || !strings.Contains(err.Error(), "kubeconfig") {
		t.Errorf("without a kubeconfig: err %v, want one saying so", err)
	}
}

// TestNewWatchesQuotas builds the plugin on a fake cluster: the quotas
// listed before New are in force when it returns, and a raise made later
// is read and retries the team's pending pods, and only them.
func TestNewWatchesQuotas(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := gpuPod("pending", "a-1", 1, 0)
	other := gpuPod("other", "b-1", 1, 0)
	running := gpuPod("running", "a-2", 1, 0)
	running.Spec.NodeName = "h1"
	h, factory := newHandle(t, ctx, pending, other, running)
	client := quotaClient(true, h100("10"))
	pl, err := newWithClient(ctx, h, client)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if got := pl.quotas.Load().list; len(got) != 1 || got[0].q.Teams[0].Limits[0].Max != 10 {
		t.Fatalf("quotas after New: %v, want h100 with 10 GPUs for team-a", got)
	}
	raised := h100("12")
	raised.ResourceVersion = "2" // the fake keeps what it is given; an API server bumps it
	if _, err := client.SchedulingV1alpha1().NodePoolQuotas().Update(ctx, raised, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got := pl.quotas.Load().list
		return len(got) == 1 && got[0].q.Teams[0].Limits[0].Max == 12 && len(h.got()) > 0, nil
	})
	if err != nil {
		t.Fatalf("the raise to 12 was not read, or retried no pod: quotas %v, activated %v", pl.quotas.Load().list, h.got())
	}
	if got := h.got(); len(got) != 1 || got[0] != "a-1/pending" {
		t.Errorf("activated %v, want only a-1/pending (team-a, not bound)", got)
	}
}

// TestNewRefusesArgs: the plugin has no args kind, so args in its
// pluginConfig entry reach New undecoded; they are refused, not ignored.
func TestNewRefusesArgs(t *testing.T) {
	for _, raw := range []string{"", "{}", "null"} {
		if err := noArgs(&runtime.Unknown{Raw: []byte(raw)}); err != nil {
			t.Errorf("args %q: %v, want none", raw, err)
		}
	}
	if err := noArgs(nil); err != nil {
		t.Errorf("no args: %v", err)
	}
	err := noArgs(&runtime.Unknown{Raw: []byte(`{"limits":{"cpu":"4"}}`)})
	if err == nil || !strings.Contains(err.Error(), "pluginConfig[NodePoolQuota].args: NodePoolQuota takes no args") {
		t.Errorf("args given: %v, want an error naming pluginConfig[NodePoolQuota].args", err)
	}
	if _, err := New(context.Background(), &runtime.Unknown{Raw: []byte(`{"x":1}`)}, nil); err == nil || !strings.Contains(err.Error(), "takes no args") {
		t.Errorf("New with args: %v", err)
	}
}
