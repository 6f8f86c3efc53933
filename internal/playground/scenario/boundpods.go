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

package scenario

import (
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// MaxBoundPods caps the scenario's boundPods: they are created directly,
// bound, without the scheduler, so a snapshot of a large cluster fits.
const MaxBoundPods = 100000

// PlaceholderImage is the image of every container of a bound pod: no
// kubelet runs, and a snapshot records no image.
const PlaceholderImage = "registry.k8s.io/pause:3.10"

// BoundPod is a pod already running on a node of the scenario: what
// `playground snapshot` records of a live cluster's pods, and only that.
type BoundPod struct {
	// Namespace defaults to workload.DefaultNamespace.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// NodeName is a node of the scenario.
	NodeName string            `json:"nodeName"`
	Labels   map[string]string `json:"labels,omitempty"`
	// Owner is the pod's controller (a DaemonSet, a ReplicaSet, ...). The
	// garbage collector deletes a pod whose owner does not exist, so:
	//
	//   - an apps/v1 DaemonSet is created, one per namespace and name, with
	//     the pod as its controller owner: the plugins that exempt
	//     DaemonSet pods (pkg/podowner.IsDaemonSetPod) see one. Its pod
	//     template is pinned to the nodes of its bound pods (required node
	//     affinity, a metadata.name term per node), tolerates every taint and has
	//     updateStrategy OnDelete, so the DaemonSet controller wants
	//     exactly the pods that exist and replaces none. Its pods carry
	//     the label BoundDaemonSetLabel=<name>, its selector. A second pod
	//     of one DaemonSet on one node (a surge) is treated as below.
	//   - any other owner is not created: the pod gets no owner reference,
	//     and the annotation OwnerAnnotation (Kind/name) records it.
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
		ns := orDefault(bp.Namespace)
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(p.Child("namespace"), bp.Namespace, msg))
		}
		if bp.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(bp.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), bp.Name, msg))
			}
			ref := types.NamespacedName{Namespace: ns, Name: bp.Name}
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
			if msg := quantityOutOfRange(name, q); msg != "" {
				errs = append(errs, field.Invalid(rp, string(c.Requests[name]), msg))
			}
		}
	}
	return errs
}

// standardResources may have requests without limits; any other resource
// (extended resources, hugepages) gets its requests as limits too, as the
// API server requires.
var standardResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

const (
	// OwnerAnnotation records the owner of a bound pod whose owner is not
	// created (every kind but DaemonSet): Kind/name.
	OwnerAnnotation = "playground.adminsched.io/owner"
	// BoundDaemonSetLabel selects the bound pods of a DaemonSet the
	// playground creates for them.
	BoundDaemonSetLabel = "playground.adminsched.io/daemonset"
	// BoundPodsScheduler is the scheduler name of the pod template of such
	// a DaemonSet. No scheduler serves it: should the DaemonSet controller
	// create a pod before it sees the bound pods, that pod stays pending
	// until the controller deletes it as a second pod on its node.
	BoundPodsScheduler = "playground-bound-pods"
)

// isDaemonSet reports whether o is an apps/v1 DaemonSet, the owner the
// plugins recognize.
func (o *Owner) isDaemonSet() bool {
	return o != nil && o.Kind == "DaemonSet" && o.APIVersion == "apps/v1"
}

// Object returns the pod to create, bound to its node. bp must be valid.
// dsPod says that bp is the pod of its DaemonSet owner on its node (see
// Owner): it then has the DaemonSet as controller owner, whose UID the
// creator fills in once the DaemonSet exists.
func (bp *BoundPod) Object(dsPod bool) *corev1.Pod {
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
		pod.Namespace = workload.DefaultNamespace
	}
	switch o := bp.Owner; {
	case o == nil:
	case dsPod:
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[BoundDaemonSetLabel] = o.Name
		pod.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
	default:
		pod.Annotations = map[string]string{OwnerAnnotation: o.Kind + "/" + o.Name}
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

// boundObjects returns the DaemonSet of each DaemonSet owner of pods (see
// BoundPod.Owner), in the order of their first pod, and every pod to create.
func boundObjects(pods []BoundPod) ([]*appsv1.DaemonSet, []*corev1.Pod) {
	nodes := map[types.NamespacedName]sets.Set[string]{}
	var order []types.NamespacedName
	objects := make([]*corev1.Pod, len(pods))
	for i := range pods {
		bp := &pods[i]
		dsPod := false
		if bp.Owner.isDaemonSet() {
			key := types.NamespacedName{Namespace: orDefault(bp.Namespace), Name: bp.Owner.Name}
			if nodes[key] == nil {
				nodes[key] = sets.New[string]()
				order = append(order, key)
			}
			dsPod = !nodes[key].Has(bp.NodeName)
			nodes[key].Insert(bp.NodeName)
		}
		objects[i] = bp.Object(dsPod)
	}
	daemonSets := make([]*appsv1.DaemonSet, 0, len(order))
	for _, key := range order {
		labels := map[string]string{BoundDaemonSetLabel: key.Name}
		daemonSets = append(daemonSets, &appsv1.DaemonSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
			Spec: appsv1.DaemonSetSpec{
				Selector:       &metav1.LabelSelector{MatchLabels: labels},
				UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						SchedulerName: BoundPodsScheduler,
						Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
							RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: nodeTerms(sets.List(nodes[key]))},
						}},
						Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
						Containers:  []corev1.Container{{Name: "c-0", Image: PlaceholderImage}},
					},
				},
			},
		})
	}
	return daemonSets, objects
}

// nodeTerms selects the nodes by name: one term each, as a metadata.name
// field selector takes one value.
func nodeTerms(nodes []string) []corev1.NodeSelectorTerm {
	terms := make([]corev1.NodeSelectorTerm, 0, len(nodes))
	for _, n := range nodes {
		terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{n},
		}}})
	}
	return terms
}
