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

// Package controller writes the maintenance windows that MaintenanceWindow
// reads into the signals everyone else reads: the node lifecycle conditions
// MaintenancePlanned and MaintenanceInProgress (KEP-5683), and a NoSchedule
// taint while a window is open, so that the default scheduler, autoscalers
// and the descheduler see the windows our plugin sees. It removes what it
// set once nothing is announced any more, and never touches a taint or a
// condition that another writer set (see README.md).
package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

// Recorder is the part of record.EventRecorder the controller uses.
type Recorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// Option configures New.
type Option func(*Controller)

// WithClock replaces the real clock, which says which windows are open and
// times the requeues at their boundaries, for tests.
func WithClock(clk clock.WithTicker) Option { return func(c *Controller) { c.clock = clk } }

// WithRateLimiter replaces the workqueue's default controller rate limiter,
// which paces the retries of a node whose write lost a race.
func WithRateLimiter(rl workqueue.TypedRateLimiter[string]) Option {
	return func(c *Controller) { c.rateLimiter = rl }
}

// WithPlannedAhead sets how long before a window opens the node is marked
// MaintenancePlanned; by default the args' horizon.
func WithPlannedAhead(d time.Duration) Option { return func(c *Controller) { c.ahead = d } }

// WithNodeClaims reads Karpenter's NodeClaims too: an expiry is a window
// that opens then and does not end, drift or disruption plan maintenance.
// Call Enqueue when a node's NodeClaim changes.
func WithNodeClaims(nc window.NodeClaims) Option { return func(c *Controller) { c.claims = nc } }

// Controller writes the windows' conditions and taint. Build it with New,
// then call Run once.
type Controller struct {
	client      kubernetes.Interface
	factory     informers.SharedInformerFactory
	nodes       corelisters.NodeLister
	synced      cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
	rateLimiter workqueue.TypedRateLimiter[string]
	recorder    Recorder
	clock       clock.WithTicker
	sources     *sources
	claims      window.NodeClaims
	ahead       time.Duration
	marks       *marks
	superseded  *superseded
	// onSynced, for tests, hears each node synced and its next boundary.
	onSynced func(name string, next time.Time, err error)
}

// New builds a controller for the windows args announces (defaulted and
// validated, as the scheduler runs them). factory provides the nodes.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, args *config.MaintenanceWindowArgs, recorder Recorder, opts ...Option) (*Controller, error) {
	c := &Controller{
		client:     client,
		factory:    factory,
		recorder:   recorder,
		clock:      clock.RealClock{},
		sources:    newSources(args),
		ahead:      args.Horizon.Duration,
		marks:      &marks{nodes: map[string]nodeMarks{}},
		superseded: &superseded{rvs: map[string][]string{}},
		onSynced:   func(string, time.Time, error) {},
	}
	for _, o := range opts {
		o(c)
	}
	if c.ahead < 0 {
		return nil, fmt.Errorf("the planned-ahead time (%s) must not be negative", c.ahead)
	}
	if c.rateLimiter == nil {
		c.rateLimiter = workqueue.DefaultTypedControllerRateLimiter[string]()
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(c.rateLimiter,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "maintenancewindow", Clock: c.clock})
	nodes := factory.Core().V1().Nodes()
	c.nodes = nodes.Lister()
	informer := nodes.Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: c.nodeUpdated,
		DeleteFunc: c.nodeDeleted,
	}); err != nil {
		return nil, fmt.Errorf("node handler: %w", err)
	}
	c.synced = informer.HasSynced
	return c, nil
}

// Enqueue has node name synced soon, e.g. when its NodeClaim changed.
func (c *Controller) Enqueue(name string) { c.queue.Add(name) }

// HasSynced reports whether the node cache has synced.
func (c *Controller) HasSynced() bool { return c.synced() }

// Run starts the informers and workers workers, and writes until ctx is
// done; it returns once the workers have stopped.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if workers < 1 {
		return fmt.Errorf("workers must be at least 1, not %d", workers)
	}
	defer c.queue.ShutDown()
	c.factory.Start(ctx.Done())
	synced := []cache.InformerSynced{c.synced}
	// An index of NodeClaims that syncs on its own (package nodeclaims') is
	// waited for too: a node synced before would lose its drift.
	if s, ok := c.claims.(interface{ HasSynced() bool }); ok {
		synced = append(synced, s.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("informers did not sync: %w", context.Cause(ctx))
	}
	klog.FromContext(ctx).Info("Maintenance window controller started", "workers", workers, "plannedAhead", c.ahead,
		"sources", c.sources.names(), "karpenter", c.claims != nil)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.work, time.Second) })
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

// work processes nodes until the queue shuts down; the queue never hands
// one node to two workers at once.
func (c *Controller) work(ctx context.Context) {
	for {
		name, quit := c.queue.Get()
		if quit {
			return
		}
		c.process(ctx, name)
	}
}

func (c *Controller) process(ctx context.Context, name string) {
	defer c.queue.Done(name)
	logger := klog.FromContext(ctx).WithValues("node", name)
	next, err := c.sync(klog.NewContext(ctx, logger), name)
	// The next boundary stands whether or not this sync wrote: a failed
	// write is retried sooner, by the rate limiter.
	if !next.IsZero() {
		c.queue.AddAfter(name, next.Sub(c.clock.Now()))
	}
	c.onSynced(name, next, err)
	if err == nil {
		c.queue.Forget(name)
		return
	}
	if ctx.Err() == nil {
		logger.V(2).Info("Requeued the node", "err", err)
	}
	c.queue.AddRateLimited(name)
}

func (c *Controller) enqueue(obj any) {
	if node, ok := obj.(*v1.Node); ok {
		c.queue.Add(node.Name)
	}
}

// nodeUpdated enqueues a node whose announcements (annotations, labels),
// taints or conditions changed; status heartbeats alone do not.
func (c *Controller) nodeUpdated(oldObj, obj any) {
	old, ok1 := oldObj.(*v1.Node)
	node, ok2 := obj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	if !equality.Semantic.DeepEqual(old.Annotations, node.Annotations) || !equality.Semantic.DeepEqual(old.Labels, node.Labels) ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) || conditionsChanged(old, node) {
		c.queue.Add(node.Name)
	}
}

// conditionsChanged compares the conditions of the types the controller
// writes, without their heartbeat times.
func conditionsChanged(old, node *v1.Node) bool {
	pick := func(n *v1.Node) (out []v1.NodeCondition) {
		for _, c := range n.Status.Conditions {
			if c.Type == ConditionMaintenancePlanned || c.Type == ConditionMaintenanceInProgress {
				c.LastHeartbeatTime = n.CreationTimestamp
				out = append(out, c)
			}
		}
		return out
	}
	return !equality.Semantic.DeepEqual(pick(old), pick(node))
}

func (c *Controller) nodeDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if node, ok := obj.(*v1.Node); ok {
		c.marks.set(node.Name, nil)
		c.superseded.forget(node.Name)
	}
}
