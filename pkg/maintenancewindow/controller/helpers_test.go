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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/apis/config/scheme"
)

// t0 is when the fake clock starts.
var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

var nodesGVR = v1.SchemeGroupVersion.WithResource("nodes")

// interval is an annotation value from t0+from to t0+to.
func interval(from, to time.Duration) string {
	return t0.Add(from).Format(time.RFC3339) + "/" + t0.Add(to).Format(time.RFC3339)
}

// defaultArgs are MaintenanceWindow's args as a profile without
// pluginConfig gets them.
func defaultArgs(t *testing.T) *config.MaintenanceWindowArgs {
	t.Helper()
	args, err := scheme.DefaultArgs(config.MaintenanceWindowName)
	if err != nil {
		t.Fatal(err)
	}
	return args.(*config.MaintenanceWindowArgs)
}

// countingLimiter retries at once (the fake clock would hold any delay)
// and counts the retries asked for.
type countingLimiter struct{ asked atomic.Int32 }

func (l *countingLimiter) When(string) time.Duration { l.asked.Add(1); return 0 }
func (l *countingLimiter) Forget(string)             {}
func (l *countingLimiter) NumRequeues(string) int    { return 0 }

var _ workqueue.TypedRateLimiter[string] = &countingLimiter{}

// harness is a fake API server that, unlike the plain fake, guards node
// writes by resourceVersion as the real one does, with a fake clock, and a
// record of every sync.
type harness struct {
	t       *testing.T
	client  *fake.Clientset
	clk     *testingclock.FakeClock
	rec     *record.FakeRecorder
	limiter *countingLimiter
	logger  klog.Logger
	rv      atomic.Int64
	// failNext, when set, answers the next node write instead of the store.
	failNext atomic.Pointer[func(clienttesting.Action) error]

	mu    sync.Mutex
	syncs []syncResult
}

type syncResult struct {
	name string
	next time.Time
	err  error
}

func newHarness(t *testing.T, nodes ...*v1.Node) *harness {
	t.Helper()
	// Before any controller runs, as the binary does it.
	RegisterMetrics()
	h := &harness{t: t, client: fake.NewClientset(), clk: testingclock.NewFakeClock(t0),
		rec: record.NewFakeRecorder(100), limiter: &countingLimiter{},
		logger: ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(2)))}
	h.client.PrependReactor("update", "nodes", h.guardUpdate)
	for _, n := range nodes {
		h.create(n)
	}
	return h
}

func (h *harness) create(n *v1.Node) {
	h.t.Helper()
	n.ResourceVersion = strconv.FormatInt(h.rv.Add(1), 10)
	if err := h.client.Tracker().Add(n); err != nil {
		h.t.Fatal(err)
	}
}

// guardUpdate fails a node write whose resourceVersion is not the stored
// one, and otherwise stores it with a new one.
func (h *harness) guardUpdate(a clienttesting.Action) (bool, runtime.Object, error) {
	if f := h.failNext.Swap(nil); f != nil {
		return true, nil, (*f)(a)
	}
	node := a.(clienttesting.UpdateAction).GetObject().(*v1.Node)
	cur, err := h.client.Tracker().Get(nodesGVR, "", node.Name)
	if err != nil {
		return true, nil, err
	}
	if cur.(*v1.Node).ResourceVersion != node.ResourceVersion {
		return true, nil, apierrors.NewConflict(nodesGVR.GroupResource(), node.Name, fmt.Errorf("resourceVersion %s is stale", node.ResourceVersion))
	}
	node = node.DeepCopy()
	node.ResourceVersion = strconv.FormatInt(h.rv.Add(1), 10)
	if err := h.client.Tracker().Update(nodesGVR, node, ""); err != nil {
		return true, nil, err
	}
	return true, node, nil
}

// start runs a controller for args until the test ends.
func (h *harness) start(args *config.MaintenanceWindowArgs, opts ...Option) *Controller {
	h.t.Helper()
	factory := informers.NewSharedInformerFactory(h.client, 0)
	opts = append([]Option{WithClock(h.clk), WithRateLimiter(h.limiter)}, opts...)
	c, err := New(h.client, factory, args, h.rec, opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	c.onSynced = func(name string, next time.Time, err error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.syncs = append(h.syncs, syncResult{name, next, err})
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), h.logger))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, 2) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Run: %v", err)
		}
	})
	return c
}

// node returns the stored node.
func (h *harness) node(name string) *v1.Node {
	h.t.Helper()
	obj, err := h.client.Tracker().Get(nodesGVR, "", name)
	if err != nil {
		h.t.Fatal(err)
	}
	return obj.(*v1.Node)
}

func (h *harness) synced() []syncResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]syncResult(nil), h.syncs...)
}

// waitFor polls cond for 10 s of real time.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitNode waits until the stored node name passes cond.
func (h *harness) waitNode(name, what string, cond func(*v1.Node) bool) *v1.Node {
	h.t.Helper()
	var n *v1.Node
	h.waitFor(name+": "+what, func() bool { n = h.node(name); return cond(n) })
	return n
}

// settle waits until every sync so far has ended without a retry pending:
// the last sync of each node succeeded and the queue is empty.
func (h *harness) settle(c *Controller, names ...string) {
	h.t.Helper()
	h.waitFor("the controller to settle", func() bool {
		last := map[string]error{}
		for _, s := range h.synced() {
			last[s.name] = s.err
		}
		for _, n := range names {
			if err, ok := last[n]; !ok || err != nil {
				return false
			}
		}
		return c.queue.Len() == 0
	})
}

// step moves the fake clock by d once the queue's timers are waiting.
func (h *harness) step(d time.Duration) {
	h.t.Helper()
	h.waitFor("a timer on the fake clock", h.clk.HasWaiters)
	h.clk.Step(d)
}

// newNode is a Ready node with the maintenance annotation value (none if
// empty) and mods applied.
func newNode(name, value string, mods ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
		Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady"}}},
	}
	if value != "" {
		n.Annotations["scheduling.adminsched.io/maintenance-window"] = value
	}
	for _, m := range mods {
		m(n)
	}
	return n
}

func condition(n *v1.Node, typ string) *v1.NodeCondition {
	for i := range n.Status.Conditions {
		if string(n.Status.Conditions[i].Type) == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// hasOurTaint: n carries the controller's taint, marker value included.
func hasOurTaint(n *v1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == TaintKey && t.Effect == v1.TaintEffectNoSchedule && t.Value == "maintenancewindow-controller" {
			return true
		}
	}
	return false
}

// events drains the recorded events.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
