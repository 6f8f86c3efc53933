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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
		// A copy: a File's objects serve every plan made of it.
		u := d.other.DeepCopy()
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
