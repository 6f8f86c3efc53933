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

package apply

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// boundWorkers is how many create requests CreateNodes and CreateBoundPods
// have in flight at once.
const boundWorkers = 16

// boundProgressEvery: a progress line after each that many bound pods.
const boundProgressEvery = 10000

// CreateBoundPods creates bound pods (spec.nodeName set), with
// workload.BoundPodAnnotation, after their namespaces and the DaemonSets that own
// some of them; boundWorkers requests in flight, a progress line every
// 10,000 pods. A pod whose controller OwnerReference is an apps/v1
// DaemonSet gets the UID of the DaemonSet of that namespace and name
// created here (the caller leaves it empty); a pod naming a DaemonSet not in
// daemonSets is an error, found before anything is created. pods are not
// modified. When controllersRun, CreateBoundPods then waits until the
// DaemonSet controller has taken each DaemonSet's pods as its own (see
// boundWaitDaemonSets): a DaemonSet's template must be pinned to the nodes
// of its pods. A scheduler started next then sees the cluster as the
// snapshot had it.
func CreateBoundPods(ctx context.Context, client kubernetes.Interface, daemonSets []*appsv1.DaemonSet, pods []*corev1.Pod, controllersRun bool, progress io.Writer) error {
	if len(pods) == 0 && len(daemonSets) == 0 {
		return nil
	}
	logger := klog.FromContext(ctx)
	if err := boundCheck(daemonSets, pods); err != nil {
		return err
	}
	if err := boundCreateNamespaces(ctx, client, daemonSets, pods); err != nil {
		return err
	}
	created, err := boundCreateDaemonSets(ctx, client, daemonSets)
	if err != nil {
		return err
	}
	nodeProgress(progress, "creating %d bound pods\n", len(pods))
	start := time.Now()
	var (
		done       atomic.Int64
		progressMu sync.Mutex // a line at a time
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(boundWorkers)
	for _, pod := range pods {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			obj := boundObject(pod, created)
			if _, err := client.CoreV1().Pods(boundNamespace(pod)).Create(gctx, obj, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating bound pod %s/%s: %w", boundNamespace(pod), pod.Name, err)
			}
			logger.V(5).Info("Created bound pod", "pod", klog.KObj(pod), "node", pod.Spec.NodeName)
			if n := done.Add(1); n%boundProgressEvery == 0 && int(n) < len(pods) {
				progressMu.Lock()
				nodeProgress(progress, "created %d/%d bound pods\n", n, len(pods))
				progressMu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	logger.V(2).Info("Created bound pods", "count", len(pods), "duration", time.Since(start))
	nodeProgress(progress, "created %d bound pods in %v\n", len(pods), time.Since(start).Round(time.Millisecond))
	if !controllersRun {
		return nil
	}
	return boundWaitDaemonSets(ctx, client, created, boundNodesOf(pods))
}

// boundNamespace is the namespace a pod or DaemonSet is created in.
func boundNamespace(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	return workload.DefaultNamespace
}

// boundDaemonSetOwner returns the index of pod's controller OwnerReference
// when it is an apps/v1 DaemonSet, else -1.
func boundDaemonSetOwner(pod *corev1.Pod) int {
	for i, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "DaemonSet" && ref.APIVersion == appsv1.SchemeGroupVersion.String() {
			return i
		}
	}
	return -1
}

// boundCheck refuses, before anything is created, a pod without a node, a
// nil object and a pod whose DaemonSet is not given.
func boundCheck(daemonSets []*appsv1.DaemonSet, pods []*corev1.Pod) error {
	given := make(map[types.NamespacedName]bool, len(daemonSets))
	for i, ds := range daemonSets {
		if ds == nil {
			return fmt.Errorf("bound DaemonSet %d is nil", i)
		}
		given[types.NamespacedName{Namespace: boundNamespace(ds), Name: ds.Name}] = true
	}
	for i, pod := range pods {
		if pod == nil {
			return fmt.Errorf("bound pod %d is nil", i)
		}
		if pod.Spec.NodeName == "" {
			return fmt.Errorf("bound pod %s/%s: spec.nodeName is empty: a bound pod needs its node", boundNamespace(pod), pod.Name)
		}
		if o := boundDaemonSetOwner(pod); o >= 0 {
			key := types.NamespacedName{Namespace: boundNamespace(pod), Name: pod.OwnerReferences[o].Name}
			if !given[key] {
				return fmt.Errorf("bound pod %s/%s: metadata.ownerReferences[%d] names DaemonSet %s, which is not among the DaemonSets to create", key.Namespace, pod.Name, o, key)
			}
		}
	}
	return nil
}

// boundCreateNamespaces creates the namespaces of daemonSets and pods that
// do not exist yet, in order of first use.
func boundCreateNamespaces(ctx context.Context, client kubernetes.Interface, daemonSets []*appsv1.DaemonSet, pods []*corev1.Pod) error {
	seen := map[string]bool{}
	var names []string
	add := func(obj metav1.Object) {
		if ns := boundNamespace(obj); !seen[ns] {
			seen[ns] = true
			names = append(names, ns)
		}
	}
	for _, ds := range daemonSets {
		add(ds)
	}
	for _, pod := range pods {
		add(pod)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(boundWorkers)
	for _, ns := range names {
		g.Go(func() error {
			_, err := client.CoreV1().Namespaces().Create(gctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating namespace %s: %w", ns, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// boundCreateDaemonSets creates the DaemonSets in order and returns them as
// created, by namespace and name.
func boundCreateDaemonSets(ctx context.Context, client kubernetes.Interface, daemonSets []*appsv1.DaemonSet) (map[types.NamespacedName]*appsv1.DaemonSet, error) {
	created := make(map[types.NamespacedName]*appsv1.DaemonSet, len(daemonSets))
	for _, ds := range daemonSets {
		key := types.NamespacedName{Namespace: boundNamespace(ds), Name: ds.Name}
		c, err := client.AppsV1().DaemonSets(key.Namespace).Create(ctx, ds, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("creating DaemonSet %s for its bound pods: %w", key, err)
		}
		klog.FromContext(ctx).V(2).Info("Created DaemonSet of bound pods", "daemonSet", klog.KObj(c))
		created[key] = c
	}
	return created, nil
}

// boundObject returns the pod to create: a shallow copy of pod (which
// stays as it is) with workload.BoundPodAnnotation and, for a pod of a DaemonSet,
// the UID of the DaemonSet in created.
func boundObject(pod *corev1.Pod, created map[types.NamespacedName]*appsv1.DaemonSet) *corev1.Pod {
	cp := *pod
	cp.Annotations = make(map[string]string, len(pod.Annotations)+1)
	maps.Copy(cp.Annotations, pod.Annotations)
	cp.Annotations[workload.BoundPodAnnotation] = "true"
	if o := boundDaemonSetOwner(pod); o >= 0 {
		ds := created[types.NamespacedName{Namespace: boundNamespace(pod), Name: pod.OwnerReferences[o].Name}]
		cp.OwnerReferences = slices.Clone(pod.OwnerReferences)
		cp.OwnerReferences[o].UID = ds.UID
	}
	return &cp
}

// boundWaitTimeout bounds the wait for the DaemonSet controller.
const boundWaitTimeout = 2 * time.Minute

// boundWaitInterval is how often the DaemonSets' status is read.
const boundWaitInterval = 100 * time.Millisecond

// boundNodesOf counts, for each DaemonSet, the nodes its bound pods are on:
// the caller pins a bound DaemonSet's template to them, so that is what the
// controller wants.
func boundNodesOf(pods []*corev1.Pod) map[types.NamespacedName]int {
	nodes := map[types.NamespacedName]map[string]bool{}
	for _, pod := range pods {
		o := boundDaemonSetOwner(pod)
		if o < 0 {
			continue
		}
		key := types.NamespacedName{Namespace: boundNamespace(pod), Name: pod.OwnerReferences[o].Name}
		if nodes[key] == nil {
			nodes[key] = map[string]bool{}
		}
		nodes[key][pod.Spec.NodeName] = true
	}
	counts := make(map[types.NamespacedName]int, len(nodes))
	for key, n := range nodes {
		counts[key] = len(n)
	}
	return counts
}

// boundWaitDaemonSets waits until the DaemonSet controller has observed
// each created DaemonSet with its bound pods, one on each of want[key]
// nodes, and has no pod of its own left (one it made before it saw the bound
// pods stays unbound until the controller deletes it as a second pod on its
// node). It reads each DaemonSet's status, and lists its pods only once that
// status is complete, so that it costs little while the controller works.
func boundWaitDaemonSets(ctx context.Context, client kubernetes.Interface, created map[types.NamespacedName]*appsv1.DaemonSet, want map[types.NamespacedName]int) error {
	pending := slices.SortedFunc(maps.Keys(created), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	var waiting string
	err := wait.PollUntilContextTimeout(ctx, boundWaitInterval, boundWaitTimeout, true, func(ctx context.Context) (bool, error) {
		for len(pending) > 0 {
			key := pending[0]
			if msg, err := boundDaemonSetWaiting(ctx, client, created[key], want[key]); err != nil || msg != "" {
				waiting = msg
				if err != nil {
					waiting = err.Error()
				}
				return false, nil
			}
			pending = pending[1:]
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the DaemonSet controller to take the bound pods (%s): %w", waiting, err)
	}
	return nil
}

// boundDaemonSetWaiting says what the DaemonSet controller has yet to do
// for ds, "" when nothing.
func boundDaemonSetWaiting(ctx context.Context, client kubernetes.Interface, ds *appsv1.DaemonSet, want int) (string, error) {
	key := klog.KObj(ds).String()
	cur, err := client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	st := cur.Status
	if st.ObservedGeneration < cur.Generation || int(st.DesiredNumberScheduled) != want || int(st.CurrentNumberScheduled) != want {
		return fmt.Sprintf("DaemonSet %s: observed generation %d of %d, %d pods wanted and %d scheduled, want %d",
			key, st.ObservedGeneration, cur.Generation, st.DesiredNumberScheduled, st.CurrentNumberScheduled, want), nil
	}
	selector, err := metav1.LabelSelectorAsSelector(cur.Spec.Selector)
	if err != nil {
		return "", fmt.Errorf("DaemonSet %s: spec.selector: %w", key, err)
	}
	list, err := client.CoreV1().Pods(ds.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String(), ResourceVersion: "0"})
	if err != nil {
		return "", err
	}
	for i := range list.Items {
		if p := &list.Items[i]; p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			return fmt.Sprintf("DaemonSet %s has a pod of its own, %s", key, p.Name), nil
		}
	}
	return "", nil
}
