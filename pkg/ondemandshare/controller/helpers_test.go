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

package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

const ns = "apps"

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// harness is a fake API server that, unlike the plain fake, guards updates
// by resourceVersion (as the real one does), can delay every pod watch event
// (informer lag), and counts the decisions written per pod.
type harness struct {
	t        *testing.T
	client   *fake.Clientset
	policies []*policy.Policy
	rec      *recorder
	lag      time.Duration

	rv      atomic.Int64
	created atomic.Int64 // creation timestamps: one second apart
	watches atomic.Int64 // pod watches started
	// cancel stops the last controller started, without waiting.
	cancel context.CancelFunc

	mu        sync.Mutex
	decisions map[string]int // successful updates that set a slot, per pod
	conflicts int            // updates refused for a stale resourceVersion
}

// policyArgs is the default policy: 30% on Karpenter, every workload kind
// but bare ReplicaSets.
func policyArgs(name string, pct int32) config.OnDemandSharePolicy {
	return config.OnDemandSharePolicy{
		Name:               name,
		MinOnDemandPercent: pct,
		WorkloadKinds:      []config.WorkloadKind{config.WorkloadDeployment, config.WorkloadStatefulSet, config.WorkloadJob},
		Capacity:           config.CapacityClasses{Preset: config.CapacityKarpenter},
	}
}

func newHarness(t *testing.T, lag time.Duration, policies ...config.OnDemandSharePolicy) *harness {
	t.Helper()
	if len(policies) == 0 {
		policies = []config.OnDemandSharePolicy{policyArgs("main", 30)}
	}
	compiled, err := policy.Compile(&config.OnDemandShareArgs{Policies: policies})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, client: fake.NewClientset(), policies: compiled, rec: &recorder{}, lag: lag, decisions: map[string]int{}}
	h.client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		a.(clienttesting.CreateAction).GetObject().(*v1.Pod).ResourceVersion = h.nextRV()
		return false, nil, nil
	})
	h.client.PrependReactor("update", "pods", h.guardUpdate)
	h.client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := a.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := h.client.Tracker().Watch(podsGVR, a.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		h.watches.Add(1)
		if h.lag > 0 {
			w = lagged(w, h.lag)
		}
		return true, w, nil
	})
	return h
}

func (h *harness) nextRV() string { return strconv.FormatInt(h.rv.Add(1), 10) }

// guardUpdate fails an update whose resourceVersion is not the stored one.
func (h *harness) guardUpdate(a clienttesting.Action) (bool, runtime.Object, error) {
	pod := a.(clienttesting.UpdateAction).GetObject().(*v1.Pod)
	cur, err := h.client.Tracker().Get(podsGVR, pod.Namespace, pod.Name)
	if err != nil {
		return true, nil, err
	}
	if cur.(*v1.Pod).ResourceVersion != pod.ResourceVersion {
		h.mu.Lock()
		h.conflicts++
		h.mu.Unlock()
		return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), pod.Name, fmt.Errorf("resourceVersion %s is stale", pod.ResourceVersion))
	}
	pod.ResourceVersion = h.nextRV()
	if pod.Labels[share.SlotLabel] != "" && cur.(*v1.Pod).Labels[share.SlotLabel] == "" {
		h.mu.Lock()
		h.decisions[pod.Name]++
		h.mu.Unlock()
	}
	return false, nil, nil
}

// start runs a controller with workers until the test ends or stop is
// called; it returns once the pod watch is open, so that pods created next
// reach the informer on every minor's fake.
func (h *harness) start(workers int, opts ...Option) (*Controller, func()) {
	h.t.Helper()
	_, ctx := ktesting.NewTestContext(h.t)
	ctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	c, err := New(h.client, informers.NewSharedInformerFactory(h.client, 0), h.policies, append([]Option{WithRecorder(h.rec)}, opts...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	before := h.watches.Load()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, workers) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				h.t.Errorf("Run: %v", err)
			}
		})
	}
	h.t.Cleanup(stop)
	h.waitFor("the controller's caches and pod watch", func() bool { return c.HasSynced() && h.watches.Load() > before })
	return c, stop
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// replicaSet creates a ReplicaSet, owned by Deployment deployment unless
// that is empty, and returns its controller reference for pods.
func (h *harness) replicaSet(name, deployment string) metav1.OwnerReference {
	h.t.Helper()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)}}
	if deployment != "" {
		rs.OwnerReferences = []metav1.OwnerReference{controllerRef("apps/v1", "Deployment", deployment)}
	}
	if _, err := h.client.AppsV1().ReplicaSets(ns).Create(context.Background(), rs, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	return controllerRef("apps/v1", "ReplicaSet", name)
}

func controllerRef(apiVersion, kind, name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: new(true)}
}

// pod creates a gated pod of policy pol owned by owner (none if its Name is
// empty), created one second after the previous one.
func (h *harness) pod(name, pol string, owner metav1.OwnerReference, mods ...func(*v1.Pod)) *v1.Pod {
	h.t.Helper()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name),
			Labels:            map[string]string{share.PolicyLabel: pol},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, int(h.created.Add(1)), 0, time.UTC)),
		},
		Spec: v1.PodSpec{SchedulingGates: []v1.PodSchedulingGate{{Name: share.SchedulingGate}}},
	}
	if owner.Name != "" {
		p.OwnerReferences = []metav1.OwnerReference{owner}
	}
	for _, m := range mods {
		m(p)
	}
	out, err := h.client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// podsNow lists the stored pods by name.
func (h *harness) podsNow() map[string]*v1.Pod {
	h.t.Helper()
	list, err := h.client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]*v1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// waitUngated waits until none of names carries our gate.
func (h *harness) waitUngated(names ...string) map[string]*v1.Pod {
	h.t.Helper()
	var pods map[string]*v1.Pod
	h.waitFor(fmt.Sprintf("%d pods ungated", len(names)), func() bool {
		pods = h.podsNow()
		for _, n := range names {
			if p, ok := pods[n]; !ok || hasGate(p) {
				return false
			}
		}
		return true
	})
	return pods
}

func (h *harness) decisionsOf(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.decisions[name]
}

// waitEvents waits for want events starting with prefix, which follow the
// writes, and fails if there are more.
func (h *harness) waitEvents(prefix string, want int) {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%d events %q", want, prefix), func() bool { return h.rec.count(prefix) >= want })
	if got := h.rec.count(prefix); got != want {
		h.t.Errorf("%d events %q, want %d", got, prefix, want)
	}
}

// recorder keeps the events.
type recorder struct {
	mu     sync.Mutex
	events []string // "type reason pod: note"
}

func (r *recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", eventtype, reason, regarding.(*v1.Pod).Name, fmt.Sprintf(note, args...)))
}

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

// lagged delivers src's events d after they happen, in order.
func lagged(src watch.Interface, d time.Duration) watch.Interface {
	type timed struct {
		ev watch.Event
		at time.Time
	}
	w := &lagWatch{src: src, out: make(chan watch.Event), stop: make(chan struct{})}
	buf := make(chan timed, 100000)
	go func() {
		defer close(buf)
		for ev := range src.ResultChan() {
			buf <- timed{ev, time.Now().Add(d)}
		}
	}()
	go func() {
		defer close(w.out)
		for te := range buf {
			select {
			case <-time.After(time.Until(te.at)):
			case <-w.stop:
				return
			}
			select {
			case w.out <- te.ev:
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

type lagWatch struct {
	src  watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *lagWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *lagWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.src.Stop()
	})
}
