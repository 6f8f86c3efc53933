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

// Package controller is the on-demand share's decider
// (kep/46-on-demand-share/README.md §6b-6c): it watches the pods the
// admission policy gated and labelled, and decides each into a slot of its
// workload and that slot's capacity class, in one resourceVersion-guarded
// update that also removes the gate. The pods are the only state: a new
// controller continues from their slot labels.
//
// It also keeps spot from stranding pods (§6e): a spot pod Unschedulable for
// the policy's spotWaitTimeout is deleted and its slot's next pod decided
// on-demand (fallback.go); once per recovery interval, fallback pods for
// which a spot node fits now are evicted back to spot (recovery.go, fit.go).
// These timers keep a little memory per workload, which a restart loses.
package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/adminsched/scheduler-plugins/apis/config"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/policy"
	"github.com/adminsched/scheduler-plugins/pkg/ondemandshare/share"
)

// Recorder is the part of events.EventRecorder the controller uses.
type Recorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Option configures New.
type Option func(*Controller)

// WithRecorder sets the event recorder; by default Run records to the API
// server's events.k8s.io API.
func WithRecorder(r Recorder) Option { return func(c *Controller) { c.recorder = r } }

// WithHook calls hook after every pod the controller ungates, from the
// worker that did it (the place for metrics).
func WithHook(hook func(Decision)) Option { return func(c *Controller) { c.hook = hook } }

// WithRateLimiter replaces the workqueue's default controller rate limiter,
// which paces the retries of a workload whose write lost a race.
func WithRateLimiter(rl workqueue.TypedRateLimiter[Key]) Option {
	return func(c *Controller) { c.rateLimiter = rl }
}

// WithClock replaces the real clock, which times spot waits and recovery
// intervals (and the workqueue's delays), for tests.
func WithClock(clk clock.WithTicker) Option { return func(c *Controller) { c.clock = clk } }

// Controller decides gated pods. Build it with New, then call Run once.
type Controller struct {
	client      kubernetes.Interface
	policies    map[string]*policy.Policy
	podFactory  informers.SharedInformerFactory
	factory     informers.SharedInformerFactory
	pods        cache.SharedIndexInformer
	rsLister    appslisters.ReplicaSetLister
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[Key]
	rateLimiter workqueue.TypedRateLimiter[Key]
	exp         *expectations
	recorder    Recorder
	hook        func(Decision)
	clock       clock.WithTicker
	state       *states
	// nodes and bound (bound pods by node) serve recovery; nil when no
	// policy recovers.
	nodes        corelisters.NodeLister
	boundFactory informers.SharedInformerFactory
	bound        cache.SharedIndexInformer
	// onWake, for tests, hears when each sync asks to run again (zero:
	// no timer runs), from the worker, after its writes.
	onWake func(Key, time.Time)
}

// New builds a controller for policies. factory provides the ReplicaSets
// (unfiltered, shareable); the controller watches pods through a factory of
// its own that lists only pods carrying share.PolicyLabel. When a policy
// recovers spot, factory also provides the nodes, and the controller watches
// the bound pods of every namespace.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, policies []*policy.Policy, opts ...Option) (*Controller, error) {
	c := &Controller{
		client:   client,
		policies: make(map[string]*policy.Policy, len(policies)),
		factory:  factory,
		exp:      newExpectations(),
		hook:     func(Decision) {},
		clock:    clock.RealClock{},
		state:    &states{m: map[Key]*workloadState{}},
	}
	for _, p := range policies {
		c.policies[p.Name] = p
	}
	for _, o := range opts {
		o(c)
	}
	if c.rateLimiter == nil {
		c.rateLimiter = workqueue.DefaultTypedControllerRateLimiter[Key]()
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(c.rateLimiter, workqueue.TypedRateLimitingQueueConfig[Key]{Name: "ondemandshare", Clock: c.clock})
	c.podFactory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = share.PolicyLabel
	}))
	c.pods = c.podFactory.Core().V1().Pods().Informer()
	if err := c.pods.AddIndexers(cache.Indexers{ownerIndex: indexByOwner}); err != nil {
		return nil, fmt.Errorf("pod index: %w", err)
	}
	if _, err := c.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podAdded,
		UpdateFunc: c.podUpdated,
		DeleteFunc: c.podDeleted,
	}); err != nil {
		return nil, fmt.Errorf("pod handler: %w", err)
	}
	rs := factory.Apps().V1().ReplicaSets()
	c.rsLister = rs.Lister()
	if _, err := rs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.replicaSetChanged,
		UpdateFunc: func(_, obj any) { c.replicaSetChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("ReplicaSet handler: %w", err)
	}
	c.synced = []cache.InformerSynced{c.pods.HasSynced, rs.Informer().HasSynced}
	if slices.ContainsFunc(policies, recoveryOn) {
		if err := c.watchNodes(factory); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// HasSynced reports whether the controller's caches have synced.
func (c *Controller) HasSynced() bool {
	for _, s := range c.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Run starts the informers and workers workers, and decides until ctx is
// done; it returns once the workers have stopped.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if workers < 1 {
		return fmt.Errorf("workers must be at least 1, not %d", workers)
	}
	logger := klog.FromContext(ctx)
	defer c.queue.ShutDown()
	if c.recorder == nil {
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.client.EventsV1()})
		if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
			return fmt.Errorf("record events: %w", err)
		}
		defer b.Shutdown()
		c.recorder = b.NewRecorder(scheme.Scheme, FieldManager)
	}
	c.podFactory.Start(ctx.Done())
	defer c.podFactory.Shutdown()
	if c.boundFactory != nil {
		c.boundFactory.Start(ctx.Done())
		defer c.boundFactory.Shutdown()
	}
	c.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("informers did not sync: %w", context.Cause(ctx))
	}
	logger.Info("On-demand share controller started", "policies", len(c.policies), "workers", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, c.work, time.Second)
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

// work processes keys until the queue shuts down; the queue never hands one
// key to two workers at once.
func (c *Controller) work(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		c.process(ctx, key)
	}
}

func (c *Controller) process(ctx context.Context, key Key) {
	defer c.queue.Done(key)
	logger := klog.FromContext(ctx).WithValues("workload", key.String())
	err := c.sync(klog.NewContext(ctx, logger), key)
	if err == nil {
		c.queue.Forget(key)
		return
	}
	var retry errRetry
	if errors.As(err, &retry) || errors.Is(err, errWaitReplicaSet) {
		logger.V(2).Info("Requeued the workload", "reason", err.Error())
	} else if ctx.Err() == nil {
		logger.Error(err, "Deciding the workload's pods failed; retrying")
	}
	c.queue.AddRateLimited(key)
}

func (c *Controller) enqueue(pod *v1.Pod) {
	if key, ok := c.keyOf(pod); ok {
		c.queue.Add(key)
	}
}

func (c *Controller) podAdded(obj any) {
	if pod, ok := obj.(*v1.Pod); ok && (hasGate(pod) || timed(pod)) {
		c.enqueue(pod)
	}
}

// timed reports whether a decided pod has a timer running: a spot pod not
// bound yet (its wait), or a fallback pod (its recovery).
func timed(pod *v1.Pod) bool {
	return pod.Labels[share.ClassLabel] == string(share.Spot) && pod.Spec.NodeName == "" || pod.Annotations[share.FallbackAnnotation] != ""
}

// placement is what the timers read of a decided pod: its node and its
// PodScheduled condition.
func placement(pod *v1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return fmt.Sprintf("%s/%s/%s/%s", pod.Spec.NodeName, c.Status, c.Reason, c.LastTransitionTime.UTC().Format(time.RFC3339))
		}
	}
	return pod.Spec.NodeName
}

// podUpdated enqueues a pod that is still gated, one that stopped holding
// its slot (terminating, finished), one whose controller changed and one
// whose expected decision arrived, and a decided pod whose placement the
// timers read changed.
func (c *Controller) podUpdated(oldObj, obj any) {
	old, ok1 := oldObj.(*v1.Pod)
	pod, ok2 := obj.(*v1.Pod)
	if !ok1 || !ok2 {
		return
	}
	if hasGate(pod) || isActive(old) != isActive(pod) || controllerUID(old) != controllerUID(pod) || c.observed(old, pod) ||
		pod.Labels[share.ClassLabel] != "" && placement(old) != placement(pod) {
		c.enqueue(pod)
	}
}

// observed reports whether pod now shows a decision this controller
// expects: its workload's next sync meets the expectation. Only syncs
// change expectations, each against one consistent cache listing.
func (c *Controller) observed(old, pod *v1.Pod) bool {
	if old.Labels[share.SlotLabel] != "" || pod.Labels[share.SlotLabel] == "" {
		return false
	}
	key, ok := c.keyOf(pod)
	return ok && c.exp.has(key, pod.UID)
}

// podDeleted enqueues the workload: the pod's slot is free again.
func (c *Controller) podDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		c.enqueue(pod)
	}
}

// replicaSetChanged enqueues the gated pods of a ReplicaSet that has just
// come into the cache (or changed owner): they may have been keyed before.
func (c *Controller) replicaSetChanged(obj any) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return
	}
	objs, _ := c.pods.GetIndexer().ByIndex(ownerIndex, ownerKey(string(config.WorkloadReplicaSet), rs.Namespace, rs.Name))
	for _, o := range objs {
		if pod := o.(*v1.Pod); hasGate(pod) {
			c.enqueue(pod)
		}
	}
}

func controllerUID(pod *v1.Pod) string {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		return string(ref.UID)
	}
	return ""
}
