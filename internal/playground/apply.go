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

	appsv1 "k8s.io/api/apps/v1"
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
	// while Wait waits; nil discards them.
	Progress io.Writer
	// PollInterval defaults to 100ms.
	PollInterval time.Duration
	// Now is the clock CreateNodes expands annotation placeholders with
	// (${now+2h}, ...); nil is time.Now.
	Now func() time.Time

	namespaces sets.Set[string]
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
		created, err := a.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		created.Status = node.Status
		if _, err := a.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("setting the status of node %s: %w", node.Name, err)
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

// Apply creates the scenario's objects in order and returns every pod it
// created. A Pod object that needs scheduling is waited for (bound or
// unschedulable) before the next object; the pods of a ReplicaSet or
// Deployment are created together; a Service is created as it is. Call Wait
// for the rest.
func (a *Applier) Apply(ctx context.Context, s *Scenario) ([]types.NamespacedName, error) {
	workloads, err := s.Workloads(nil)
	if err != nil {
		return nil, err
	}
	var created []types.NamespacedName
	for _, w := range workloads {
		var pods []*corev1.Pod
		switch {
		case w.Pod != nil:
			pod := w.Pod.DeepCopy()
			PreparePod(pod, a.SchedulerName)
			pods = []*corev1.Pod{pod}
		case w.ReplicaSet != nil:
			rs := w.ReplicaSet.DeepCopy()
			PrepareTemplate(&rs.Spec.Template, a.SchedulerName)
			if pods, err = a.createReplicaSet(ctx, rs); err != nil {
				return created, err
			}
		case w.Deployment != nil:
			d := w.Deployment.DeepCopy()
			PrepareTemplate(&d.Spec.Template, a.SchedulerName)
			if pods, err = a.createDeployment(ctx, d); err != nil {
				return created, err
			}
		case w.Service != nil:
			if err := a.createService(ctx, w.Service.DeepCopy()); err != nil {
				return created, err
			}
		}
		var refs []types.NamespacedName
		for _, pod := range pods {
			if err := a.ensureNamespace(ctx, pod.Namespace); err != nil {
				return created, err
			}
			if _, err := a.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return created, fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
			klog.FromContext(ctx).V(2).Info("Created pod", "pod", klog.KObj(pod))
			refs = append(refs, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		}
		created = append(created, refs...)
		if w.Pod != nil && w.Pod.Spec.NodeName == "" {
			if err := a.wait(ctx, refs, nil); err != nil {
				return created, err
			}
		}
	}
	return created, nil
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

func (a *Applier) createDeployment(ctx context.Context, d *appsv1.Deployment) ([]*corev1.Pod, error) {
	if err := a.ensureNamespace(ctx, d.Namespace); err != nil {
		return nil, err
	}
	created, err := a.Client.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return a.createReplicaSet(ctx, ReplicaSetFor(created))
}

func (a *Applier) createReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet) ([]*corev1.Pod, error) {
	if err := a.ensureNamespace(ctx, rs.Namespace); err != nil {
		return nil, err
	}
	created, err := a.Client.AppsV1().ReplicaSets(rs.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return OwnedPods(created, a.SchedulerName), nil
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
