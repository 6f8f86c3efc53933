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

package playground

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Applier creates a scenario on a cluster and waits for the scheduler.
type Applier struct {
	Client kubernetes.Interface
	// SchedulerName is given to pods that name no scheduler.
	SchedulerName string
	// Progress receives a line whenever the count of scheduled pods changes
	// while Apply, Wait and the steps wait; nil discards them.
	Progress io.Writer
	// Alive, when set, says whether the cluster's controllers and kubelets
	// (kube-controller-manager, KWOK) still run: a wait fails with its
	// error instead of waiting for pods that will never come. It also
	// tells that controllers run: only then does CreateNodes wait for the
	// DaemonSet controller (see createBoundPods).
	Alive func() error
	// PollInterval defaults to 100ms.
	PollInterval time.Duration
	// Now is the clock CreateNodes expands annotation placeholders with
	// (${now+2h}, ...); nil is time.Now.
	Now func() time.Time

	namespaces sets.Set[string]
	// replicaSets are the ReplicaSets seen of each Deployment (see observe).
	replicaSets map[types.UID]sets.Set[types.UID]
	// lastProgress is the last progress line written, not repeated.
	lastProgress string
}

// CreateNodes creates the scenario's nodes, ready (cordoned when their spec
// says unschedulable), then its bound pods. Up to parallelNodesAbove nodes
// are created one by one in file order; more, and the bound pods, with
// Workers requests in flight.
func (a *Applier) CreateNodes(ctx context.Context, s *Scenario) error {
	logger := klog.FromContext(ctx)
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	cordoned := sets.New[string]()
	for _, spec := range s.Nodes {
		if spec.Unschedulable {
			cordoned.Insert(nodeNames(spec)...)
		}
	}
	nodes := s.NodeObjects(now())
	create := func(ctx context.Context, i int) error {
		node := nodes[i]
		node.Spec.Unschedulable = cordoned.Has(node.Name)
		// Created with its status (nodes may be): a status set by a second
		// update could come after KWOK's first one, which takes capacity
		// and allocatable from the node as it sees them.
		if _, err := a.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		logger.V(2).Info("Created node", "node", klog.KObj(node))
		return nil
	}
	if len(nodes) > parallelNodesAbove {
		if a.Progress != nil {
			fmt.Fprintf(a.Progress, "creating %d nodes\n", len(nodes))
		}
		if err := parallel(ctx, len(nodes), create); err != nil {
			return err
		}
	} else {
		for i := range nodes {
			if err := create(ctx, i); err != nil {
				return err
			}
		}
	}
	return a.createBoundPods(ctx, s)
}

// Apply creates the scenario's objects in order and returns those that have
// pods. The controllers of the cluster make the workloads' pods; each
// object is waited for until it is settled (see settle: every pod it wants
// exists and is bound or unschedulable, a Job finished) before the next one
// is created, so that a run is deterministic. A Service is created as it
// is.
func (a *Applier) Apply(ctx context.Context, s *Scenario) ([]Ref, error) {
	workloads, err := s.Workloads(nil)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, w := range workloads {
		ref, err := a.create(ctx, w)
		if err != nil {
			return refs, err
		}
		if ref == nil {
			continue
		}
		refs = append(refs, *ref)
		if err := a.wait(ctx, refs, a.Progress); err != nil {
			return refs, err
		}
	}
	return refs, nil
}

// create creates one object, with the scheduler name for its pods, and
// returns its Ref, or nil for a Service.
func (a *Applier) create(ctx context.Context, w Workload) (*Ref, error) {
	var (
		meta    metav1.Object
		kind    string
		created metav1.Object
		err     error
	)
	opts := metav1.CreateOptions{}
	switch {
	case w.Pod != nil:
		pod := w.Pod.DeepCopy()
		PreparePod(pod, a.SchedulerName)
		meta, kind = pod, "Pod"
		if err = a.ensureNamespace(ctx, pod.Namespace); err == nil {
			created, err = a.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, opts)
		}
	case w.ReplicaSet != nil:
		rs := w.ReplicaSet.DeepCopy()
		PrepareTemplate(&rs.Spec.Template, a.SchedulerName)
		meta, kind = rs, "ReplicaSet"
		if err = a.ensureNamespace(ctx, rs.Namespace); err == nil {
			created, err = a.Client.AppsV1().ReplicaSets(rs.Namespace).Create(ctx, rs, opts)
		}
	case w.Deployment != nil:
		d := w.Deployment.DeepCopy()
		PrepareTemplate(&d.Spec.Template, a.SchedulerName)
		meta, kind = d, "Deployment"
		if err = a.ensureNamespace(ctx, d.Namespace); err == nil {
			created, err = a.Client.AppsV1().Deployments(d.Namespace).Create(ctx, d, opts)
		}
	case w.StatefulSet != nil:
		ss := w.StatefulSet.DeepCopy()
		PrepareTemplate(&ss.Spec.Template, a.SchedulerName)
		meta, kind = ss, "StatefulSet"
		if err = a.ensureNamespace(ctx, ss.Namespace); err == nil {
			created, err = a.Client.AppsV1().StatefulSets(ss.Namespace).Create(ctx, ss, opts)
		}
	case w.DaemonSet != nil:
		ds := w.DaemonSet.DeepCopy()
		PrepareTemplate(&ds.Spec.Template, a.SchedulerName)
		meta, kind = ds, "DaemonSet"
		if err = a.ensureNamespace(ctx, ds.Namespace); err == nil {
			created, err = a.Client.AppsV1().DaemonSets(ds.Namespace).Create(ctx, ds, opts)
		}
	case w.Job != nil:
		job := w.Job.DeepCopy()
		PrepareTemplate(&job.Spec.Template, a.SchedulerName)
		meta, kind = job, "Job"
		if err = a.ensureNamespace(ctx, job.Namespace); err == nil {
			created, err = a.Client.BatchV1().Jobs(job.Namespace).Create(ctx, job, opts)
		}
	case w.Service != nil:
		return nil, a.createService(ctx, w.Service.DeepCopy())
	default:
		return nil, fmt.Errorf("an empty workload")
	}
	if err != nil {
		return nil, fmt.Errorf("creating %s %s/%s: %w", kind, meta.GetNamespace(), meta.GetName(), err)
	}
	klog.FromContext(ctx).V(2).Info("Created object", "kind", kind, "object", klog.KObj(meta))
	return &Ref{Kind: kind, Namespace: created.GetNamespace(), Name: created.GetName(), UID: created.GetUID()}, nil
}

func (a *Applier) createService(ctx context.Context, svc *corev1.Service) error {
	if err := a.ensureNamespace(ctx, svc.Namespace); err != nil {
		return err
	}
	if _, err := a.Client.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Created service", "service", klog.KObj(svc))
	return nil
}

func (a *Applier) ensureNamespace(ctx context.Context, ns string) error {
	if a.namespaces == nil {
		a.namespaces = sets.New[string]()
	}
	if a.namespaces.Has(ns) {
		return nil
	}
	_, err := a.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	a.namespaces.Insert(ns)
	return nil
}
