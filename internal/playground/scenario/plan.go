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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Plan is a checked scenario, ready to apply: what the apply step creates,
// typed and defaulted, in order. Building it changes nothing in the Scenario.
type Plan struct {
	// Scenario is the file as written, its base merged in.
	Scenario *Scenario
	// NodeNames are the names of every node, in file order.
	NodeNames []string
	// BoundDaemonSets are created before the bound pods: one per DaemonSet
	// owner of a bound pod (see BoundPod.Owner).
	BoundDaemonSets []*appsv1.DaemonSet
	// BoundPods are created bound (spec.nodeName set). A pod of a bound
	// DaemonSet has it as controller owner reference without a UID: the
	// creator fills it in from the DaemonSet it created.
	BoundPods []*corev1.Pod
	// Objects are the scenario's objects in file order, with their
	// apiVersion and kind. Those of the kind table are decoded, checked
	// and defaulted: namespace, scheduler name, a Job's restart policy,
	// a workload's template labels and selector. Any other is as written.
	Objects []*unstructured.Unstructured
	// Steps are the scenario's steps, each naming its object's apiVersion
	// and namespace.
	Steps []Step
	// Licenses is the license driver's configuration, defaulted and
	// validated, when the scenario has licenses (Scenario.Licenses holds
	// their checkouts outside the cluster); nil otherwise.
	Licenses *config.Configuration
}

// compile builds the plan of a valid scenario from the objects validation
// decoded; schedulerNames[0], if any, is given to pods that name no
// scheduler.
func compile(s *Scenario, objects []decoded, schedulerNames []string) (*Plan, error) {
	p := &Plan{Scenario: s}
	for _, n := range s.Nodes {
		p.NodeNames = append(p.NodeNames, nodeNames(n)...)
	}
	p.BoundDaemonSets, p.BoundPods = boundObjects(s.BoundPods)
	if s.Licenses != nil {
		p.Licenses = s.Licenses.DriverConfiguration()
	}
	apiVersions := map[string]string{} // object key -> apiVersion, for steps
	for _, d := range objects {
		u := d.other
		if d.typed != nil {
			var err error
			if u, err = defaulted(d, schedulerNames); err != nil {
				return nil, err
			}
		}
		apiVersions[d.key()] = u.GetAPIVersion()
		p.Objects = append(p.Objects, u)
	}
	for _, st := range withFrom(s.Steps, s.Licenses) {
		ref := st.Scale.objectRef()
		if st.Delete != nil {
			ref = st.Delete
		}
		if ref != nil {
			c := *ref
			c.Namespace = orDefault(c.Namespace)
			if c.APIVersion == "" {
				c.APIVersion = apiVersions[objectKey(c.Kind, c.Namespace, c.Name)]
			}
			if st.Scale != nil {
				st.Scale = &ScaleStep{ObjectRef: c, Replicas: st.Scale.Replicas}
			} else {
				st.Delete = &c
			}
		}
		p.Steps = append(p.Steps, st)
	}
	return p, nil
}

func (s *ScaleStep) objectRef() *workload.ObjectRef {
	if s == nil {
		return nil
	}
	return &s.ObjectRef
}

// defaulted applies the kind table's defaults to a copy of d's object and
// returns it unstructured, without the fields a created object has not yet.
func defaulted(d decoded, schedulerNames []string) (*unstructured.Unstructured, error) {
	rule := kinds[d.kind]
	o := d.typed.DeepCopyObject().(object)
	o.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(rule.apiVersion, d.kind))
	if rule.namespaced && o.GetNamespace() == "" {
		o.SetNamespace(workload.DefaultNamespace)
	}
	if rule.template != nil {
		t, sel := rule.template(o)
		defaultTemplate(o.GetName(), t, sel)
	}
	if rule.podSpec != nil && len(schedulerNames) > 0 {
		defaultSchedulerName(rule.podSpec(o), schedulerFor(o, schedulerNames))
	}
	if rule.defaults != nil {
		rule.defaults(o)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", d.kind, o.GetName(), err)
	}
	delete(m, "status")
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(m, "spec", "template", "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}, nil
}

// nodeNames is the names of the nodes a spec makes: Name, or Name-1..Name-Count.
func nodeNames(n NodeSpec) []string {
	count := ptr.Deref(n.Count, 1)
	if count <= 1 {
		return []string{n.Name}
	}
	names := make([]string, 0, count)
	for i := 1; i <= count; i++ {
		names = append(names, fmt.Sprintf("%s-%d", n.Name, i))
	}
	return names
}

// NodeObjects returns the nodes, ready (cordoned when their spec says
// unschedulable), with their allocatable resources also as capacity. The
// placeholders of annotation values (${now}, ${now+2h}, ...) are expanded
// relative to now, the time the nodes are created; every node gets its own
// copy of its spec's labels and annotations. Nodes may be created with
// their status: create them so, lest KWOK's first status update come
// before a second one of ours.
func (p *Plan) NodeObjects(now time.Time) []*corev1.Node {
	now = now.UTC().Truncate(time.Second)
	var nodes []*corev1.Node
	for _, spec := range p.Scenario.Nodes {
		res := corev1.ResourceList{
			corev1.ResourceCPU:    quantityOr(spec.Allocatable.CPU, DefaultCPU),
			corev1.ResourceMemory: quantityOr(spec.Allocatable.Memory, DefaultMemory),
			corev1.ResourcePods:   quantityOr(spec.Allocatable.Pods, DefaultPods),
		}
		// Expanded once per spec: the nodes share the value strings, not
		// the maps.
		annotations := expandAnnotations(spec.Annotations, now)
		for _, name := range nodeNames(spec) {
			labels := maps.Clone(spec.Labels)
			if labels == nil {
				labels = map[string]string{}
			}
			labels[corev1.LabelHostname] = name
			nodes = append(nodes, &corev1.Node{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: maps.Clone(annotations)},
				Spec:       corev1.NodeSpec{Taints: append([]corev1.Taint(nil), spec.Taints...), Unschedulable: spec.Unschedulable},
				Status: corev1.NodeStatus{
					Capacity:    res.DeepCopy(),
					Allocatable: res.DeepCopy(),
					Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
				},
			})
		}
	}
	return nodes
}

func quantityOr(q Quantity, def string) resource.Quantity {
	if q == "" {
		q = Quantity(def)
	}
	return resource.MustParse(string(q))
}

// NodeNames is the names of the nodes spec makes, in order: its name, or
// name-1 .. name-count.
func NodeNames(spec NodeSpec) []string { return nodeNames(spec) }
