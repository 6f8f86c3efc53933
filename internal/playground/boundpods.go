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
	"hash/fnv"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
)

// MaxBoundPods caps the scenario's boundPods: they are created directly,
// bound, without the scheduler, so a snapshot of a large cluster fits.
const MaxBoundPods = 100000

// PlaceholderImage is the image of every container of a bound pod: no
// kubelet runs, and a snapshot records no image.
const PlaceholderImage = "registry.k8s.io/pause:3.10"

// Workers is how many API requests CreateNodes has in flight at once for
// bound pods, and for nodes when there are more than parallelNodesAbove.
const Workers = 16

// parallelNodesAbove: up to that many nodes are created one by one, in
// file order, as they always were.
const parallelNodesAbove = 100

// BoundPod is a pod already running on a node of the scenario: what
// `playground snapshot` records of a live cluster's pods, and only that.
type BoundPod struct {
	// Namespace defaults to DefaultNamespace.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// NodeName is a node of the scenario.
	NodeName string            `json:"nodeName"`
	Labels   map[string]string `json:"labels,omitempty"`
	// Owner is the pod's controller (a DaemonSet, a ReplicaSet, ...),
	// created as its controller owner reference: plugins that ignore
	// DaemonSet pods read it. The owner itself is not created.
	Owner *Owner `json:"owner,omitempty"`
	// Priority is spec.priority, which preemption compares.
	Priority *int32 `json:"priority,omitempty"`
	// Containers hold the requests of each container; a pod without any
	// gets one container without requests.
	Containers []ContainerRequests `json:"containers,omitempty"`
	// InitContainers hold the requests of each init container.
	InitContainers []ContainerRequests `json:"initContainers,omitempty"`
}

// Owner is a pod's controller owner reference, without its UID.
type Owner struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

// ContainerRequests is what a bound pod keeps of one container.
type ContainerRequests struct {
	Requests map[corev1.ResourceName]Quantity `json:"requests,omitempty"`
	// Sidecar marks an init container with restartPolicy Always, whose
	// requests count for the pod's whole life.
	Sidecar bool `json:"sidecar,omitempty"`
}

// validateBoundPods checks the bound pods; nodes is nil when the node
// specs are too large to expand (nodeName is not checked then).
func validateBoundPods(pods []BoundPod, nodes sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("boundPods")
	if len(pods) > MaxBoundPods {
		return field.ErrorList{field.Invalid(path, len(pods), fmt.Sprintf("bound pods in total: must be at most %d", MaxBoundPods))}
	}
	seen := make(map[types.NamespacedName]int, len(pods))
	for i := range pods {
		bp := &pods[i]
		p := path.Index(i)
		if bp.Namespace == "" {
			bp.Namespace = DefaultNamespace
		}
		for _, msg := range validation.IsDNS1123Label(bp.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), bp.Namespace, msg))
		}
		if bp.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(bp.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), bp.Name, msg))
			}
			ref := types.NamespacedName{Namespace: bp.Namespace, Name: bp.Name}
			if prev, ok := seen[ref]; ok {
				errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (also boundPods[%d])", ref, prev)))
			} else {
				seen[ref] = i
			}
		}
		switch {
		case bp.NodeName == "":
			errs = append(errs, field.Required(p.Child("nodeName"), "a bound pod needs its node"))
		case nodes != nil && !nodes.Has(bp.NodeName):
			errs = append(errs, field.NotFound(p.Child("nodeName"), bp.NodeName))
		}
		errs = append(errs, metav1validation.ValidateLabels(bp.Labels, p.Child("labels"))...)
		if o := bp.Owner; o != nil {
			op := p.Child("owner")
			for name, v := range map[string]string{"apiVersion": o.APIVersion, "kind": o.Kind, "name": o.Name} {
				if v == "" {
					errs = append(errs, field.Required(op.Child(name), ""))
				}
			}
		}
		errs = append(errs, validateContainerRequests(bp.Containers, p.Child("containers"), false)...)
		errs = append(errs, validateContainerRequests(bp.InitContainers, p.Child("initContainers"), true)...)
	}
	return errs
}

func validateContainerRequests(cs []ContainerRequests, path *field.Path, init bool) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		p := path.Index(i)
		if c.Sidecar && !init {
			errs = append(errs, field.Forbidden(p.Child("sidecar"), "only init containers can be sidecars"))
		}
		for _, name := range slices.Sorted(maps.Keys(c.Requests)) {
			rp := p.Child("requests").Key(string(name))
			for _, msg := range validation.IsQualifiedName(string(name)) {
				errs = append(errs, field.Invalid(rp, name, msg))
			}
			q, err := resource.ParseQuantity(string(c.Requests[name]))
			if err != nil {
				errs = append(errs, field.Invalid(rp, string(c.Requests[name]), err.Error()))
				continue
			}
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(rp, string(c.Requests[name]), "must not be negative"))
			}
		}
	}
	return errs
}

// standardResources may have requests without limits; any other resource
// (extended resources, hugepages) gets its requests as limits too, as the
// API server requires.
var standardResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

// Object returns the pod to create, bound to its node. bp must be valid.
func (bp *BoundPod) Object() *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      bp.Name,
			Namespace: bp.Namespace,
			Labels:    maps.Clone(bp.Labels),
		},
		Spec: corev1.PodSpec{NodeName: bp.NodeName, Priority: bp.Priority},
	}
	if pod.Namespace == "" {
		pod.Namespace = DefaultNamespace
	}
	if o := bp.Owner; o != nil {
		pod.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name,
			UID:        ownerUID(pod.Namespace, o),
			Controller: ptrTrue(), BlockOwnerDeletion: ptrTrue(),
		}}
	}
	for i, c := range bp.InitContainers {
		ctr := container(fmt.Sprintf("init-%d", i), c)
		if c.Sidecar {
			always := corev1.ContainerRestartPolicyAlways
			ctr.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr)
	}
	for i, c := range bp.Containers {
		pod.Spec.Containers = append(pod.Spec.Containers, container(fmt.Sprintf("c-%d", i), c))
	}
	if len(pod.Spec.Containers) == 0 {
		pod.Spec.Containers = []corev1.Container{container("c-0", ContainerRequests{})}
	}
	return pod
}

func ptrTrue() *bool { t := true; return &t }

func container(name string, c ContainerRequests) corev1.Container {
	ctr := corev1.Container{Name: name, Image: PlaceholderImage}
	for r, q := range c.Requests {
		if ctr.Resources.Requests == nil {
			ctr.Resources.Requests = corev1.ResourceList{}
		}
		v := resource.MustParse(string(q))
		ctr.Resources.Requests[r] = v
		if !standardResources.Has(r) {
			if ctr.Resources.Limits == nil {
				ctr.Resources.Limits = corev1.ResourceList{}
			}
			ctr.Resources.Limits[r] = v
		}
	}
	return ctr
}

// ownerUID is a stable UID for an owner that does not exist: the API server
// requires one in an owner reference.
func ownerUID(namespace string, o *Owner) types.UID {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s/%s/%s/%s", o.APIVersion, o.Kind, namespace, o.Name)
	sum := h.Sum64()
	return types.UID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(sum>>32), uint16(sum>>16), uint16(sum), uint16(sum>>48), sum&0xffffffffffff))
}

// createBoundPods creates the scenario's bound pods with Workers requests
// in flight, after their namespaces.
func (a *Applier) createBoundPods(ctx context.Context, s *Scenario) error {
	if len(s.BoundPods) == 0 {
		return nil
	}
	logger := klog.FromContext(ctx)
	for _, bp := range s.BoundPods {
		ns := bp.Namespace
		if ns == "" {
			ns = DefaultNamespace
		}
		if err := a.ensureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if a.Progress != nil {
		fmt.Fprintf(a.Progress, "creating %d bound pods\n", len(s.BoundPods))
	}
	start := time.Now()
	var done atomic.Int64
	var progressMu sync.Mutex // workers report progress
	err := parallel(ctx, len(s.BoundPods), func(ctx context.Context, i int) error {
		pod := s.BoundPods[i].Object()
		if _, err := a.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating bound pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		logger.V(4).Info("Created bound pod", "pod", klog.KObj(pod), "node", pod.Spec.NodeName)
		if n := done.Add(1); n%10000 == 0 && a.Progress != nil && int(n) < len(s.BoundPods) {
			progressMu.Lock()
			fmt.Fprintf(a.Progress, "created %d/%d bound pods\n", n, len(s.BoundPods))
			progressMu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	logger.V(2).Info("Created bound pods", "count", len(s.BoundPods), "duration", time.Since(start))
	if a.Progress != nil {
		fmt.Fprintf(a.Progress, "created %d bound pods in %v\n", len(s.BoundPods), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// parallel calls fn for 0..n-1 with at most Workers calls at once. It
// returns the first error; the calls not started yet are skipped then.
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	next := make(chan int)
	for range min(Workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					once.Do(func() {
						firstErr = err
						cancel()
					})
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		// The caller's context ended.
		return context.Cause(ctx)
	}
	return firstErr
}

// nodeSet is the names of the nodes the specs make, or nil when they are
// too many to expand (validateNodes reports that).
func nodeSet(specs []NodeSpec) sets.Set[string] {
	if _, expandable := countNodes(specs); !expandable {
		return nil
	}
	nodes := sets.New[string]()
	for _, n := range specs {
		nodes.Insert(nodeNames(n)...)
	}
	return nodes
}
