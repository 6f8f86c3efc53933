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

// Package controller lifts the scheduling gate that admission puts on the
// pods of a team under a NodePoolQuota while the team has room in the
// pool, and writes each quota's status. A pod that is Pending only because
// of a quota looks to Karpenter and the Cluster Autoscaler like a pod that
// needs a node; a gated pod does not, so held pods wait gated, with an
// Event that says which limit holds them (see README.md).
package controller

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

// Recorder is the part of record.EventRecorder the controller uses.
type Recorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// StatusUpdater writes a NodePoolQuota's status: the generated clientset's
// SchedulingV1alpha1().NodePoolQuotas().
type StatusUpdater interface {
	UpdateStatus(ctx context.Context, q *v1alpha1.NodePoolQuota, opts metav1.UpdateOptions) (*v1alpha1.NodePoolQuota, error)
}

// Quotas is where the controller reads and writes NodePoolQuotas.
type Quotas struct {
	// Informer lists and watches them: the generated informer factory's
	// Scheduling().V1alpha1().NodePoolQuotas().Informer().
	Informer cache.SharedIndexInformer
	// Start starts Informer: its factory's Start.
	Start func(stop <-chan struct{})
	// Client writes their status.
	Client StatusUpdater
}

// Option configures New.
type Option func(*Controller)

// WithRateLimiter replaces the workqueue's default controller rate limiter,
// which paces the retries after a write lost a race.
func WithRateLimiter(rl workqueue.TypedRateLimiter[string]) Option {
	return func(c *Controller) { c.rateLimiter = rl }
}

// Event reason on a held pod.
const EventHeld = "NodePoolQuotaExceeded"

// FieldManager names the controller's writes in managedFields.
const FieldManager = "nodepoolquota-controller"

// syncKey is the queue's only key. Quotas that share a pod (a team under
// two pools) must see each other's reservations, so one sync plans them
// all; the queue folds a burst of events into one sync.
const syncKey = "nodepoolquotas"

// gatedIndex indexes the pods that carry the gate, so that a gated pod of
// a namespace no quota names (its quota deleted) is found and released.
const gatedIndex = "nodepoolquota-gated"

// Controller lifts the gates and writes the statuses. Build it with New,
// then call Run once.
type Controller struct {
	client      kubernetes.Interface
	factory     informers.SharedInformerFactory
	quotas      Quotas
	pods        corelisters.PodLister
	podIndex    cache.Indexer
	nodes       corelisters.NodeLister
	namespaces  corelisters.NamespaceLister
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
	rateLimiter workqueue.TypedRateLimiter[string]
	recorder    Recorder
	series      series

	// Owned by the one worker. lifted maps a pod whose gate this
	// controller removed to the resourceVersion it removed it from, until
	// the cache shows a newer one: until then the cache's copy, still
	// gated, must count as ungated, or the next sync would lift more than
	// the quota. told are the held pods that got their Event.
	lifted map[types.UID]string
	told   map[types.UID]bool

	// onSynced, for tests, hears each sync's result.
	onSynced func(error)
}

// New builds a controller. factory provides the pods, nodes and
// namespaces.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, quotas Quotas, recorder Recorder, opts ...Option) (*Controller, error) {
	c := &Controller{
		client:   client,
		factory:  factory,
		quotas:   quotas,
		recorder: recorder,
		lifted:   map[types.UID]string{},
		told:     map[types.UID]bool{},
		onSynced: func(error) {},
	}
	for _, o := range opts {
		o(c)
	}
	if c.rateLimiter == nil {
		c.rateLimiter = workqueue.DefaultTypedControllerRateLimiter[string]()
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(c.rateLimiter,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "nodepoolquota"})

	pods := factory.Core().V1().Pods()
	podInformer := pods.Informer()
	if err := podInformer.AddIndexers(cache.Indexers{gatedIndex: func(obj any) ([]string, error) {
		if pod, ok := obj.(*v1.Pod); ok && hasGate(pod) {
			return []string{"gated"}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, fmt.Errorf("pod index: %w", err)
	}
	c.pods, c.podIndex = pods.Lister(), podInformer.GetIndexer()
	nodes := factory.Core().V1().Nodes()
	c.nodes = nodes.Lister()
	namespaces := factory.Core().V1().Namespaces()
	c.namespaces = namespaces.Lister()

	handlers := []struct {
		what     string
		informer cache.SharedIndexInformer
		changed  func(old, obj any) bool
	}{
		{"NodePoolQuota", quotas.Informer, quotaChanged},
		{"pod", podInformer, podChanged},
		{"node", nodes.Informer(), labelsChanged},
		{"namespace", namespaces.Informer(), labelsChanged},
	}
	for _, h := range handlers {
		changed := h.changed
		if _, err := h.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { c.queue.Add(syncKey) },
			UpdateFunc: func(old, obj any) {
				if changed(old, obj) {
					c.queue.Add(syncKey)
				}
			},
			DeleteFunc: func(any) { c.queue.Add(syncKey) },
		}); err != nil {
			return nil, fmt.Errorf("%s handler: %w", h.what, err)
		}
		c.synced = append(c.synced, h.informer.HasSynced)
	}
	return c, nil
}

// quotaChanged: a new spec; the controller's own status writes do not
// count.
func quotaChanged(old, obj any) bool {
	o, ok1 := old.(*v1alpha1.NodePoolQuota)
	n, ok2 := obj.(*v1alpha1.NodePoolQuota)
	return !ok1 || !ok2 || o.Generation != n.Generation || !equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// podChanged: what usage, reservations and gates depend on changed. A
// status heartbeat alone does not count.
func podChanged(old, obj any) bool {
	o, ok1 := old.(*v1.Pod)
	n, ok2 := obj.(*v1.Pod)
	if !ok1 || !ok2 {
		return true
	}
	return o.Spec.NodeName != n.Spec.NodeName || o.Status.Phase != n.Status.Phase ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
		!slices.Equal(o.Spec.SchedulingGates, n.Spec.SchedulingGates) ||
		!equality.Semantic.DeepEqual(o.Spec.Containers, n.Spec.Containers) || o.Namespace != n.Namespace
}

func labelsChanged(old, obj any) bool {
	o, ok1 := old.(metav1.Object)
	n, ok2 := obj.(metav1.Object)
	return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels())
}

// hasGate says whether pod carries the quota's scheduling gate.
func hasGate(pod *v1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g v1.PodSchedulingGate) bool { return g.Name == v1alpha1.SchedulingGate })
}

// Run starts the informers and syncs until ctx is done. One worker: every
// sync plans all quotas at once (syncKey).
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.factory.Start(ctx.Done())
	c.quotas.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("informers did not sync: %w", context.Cause(ctx))
	}
	klog.FromContext(ctx).Info("NodePoolQuota controller started", "gate", v1alpha1.SchedulingGate)
	c.queue.Add(syncKey)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c.processNext(ctx) {
		}
	}()
	<-ctx.Done()
	c.queue.ShutDown()
	<-done
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.sync(ctx)
	c.onSynced(err)
	if err == nil {
		c.queue.Forget(key)
		return true
	}
	if ctx.Err() == nil {
		klog.FromContext(ctx).V(2).Info("Requeued the quotas' sync", "err", err)
	}
	c.queue.AddRateLimited(key)
	return true
}
