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
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Step is one change made to the cluster after the objects are settled:
// exactly one field is set. After each step every object is waited for
// until it is settled again.
type Step struct {
	// Scale sets a workload's replicas through its scale subresource.
	Scale *ScaleStep `json:"scale,omitempty"`
	// Delete deletes an object of the scenario; a workload's pods go with
	// it (background cascading deletion by the garbage collector), and the
	// step waits until they are gone.
	Delete *workload.ObjectRef `json:"delete,omitempty"`
	// DeleteNodes deletes the nodes it selects (of the scenario or added by
	// Karpenter) and the pods bound to them, as when a provider reclaims
	// spot instances: their controllers make new pods, which the step waits
	// for.
	DeleteNodes *NodeSelector `json:"deleteNodes,omitempty"`
	// Wait sleeps, e.g. until a maintenance window opens.
	Wait *metav1.Duration `json:"wait,omitempty"`
	// Licenses changes the seats of a feature checked out outside the
	// cluster; the step lasts until the license driver has read the change
	// and the scheduler has tried the pods it concerns.
	Licenses *LicensesStep `json:"licenses,omitempty"`
	// AddNodes creates nodes, written as the scenario's nodes are, as when
	// they join the cluster mid-run (see addnodes.go).
	AddNodes []NodeSpec `json:"addNodes,omitempty"`
	// Deschedule runs the descheduler (see deschedule.go).
	Deschedule *DescheduleStep `json:"deschedule,omitempty"`
}

// ScaleStep is a workload and its new replica count.
type ScaleStep struct {
	workload.ObjectRef `json:",inline"`
	Replicas           *int32 `json:"replicas"`
}

// MaxWait caps a wait step.
const MaxWait = time.Hour

// scalableKinds are the kinds of the kind table with a scale subresource;
// an object of any other kind is scaled if the cluster serves its scale.
var scalableKinds = []string{"Deployment", "ReplicaSet", "StatefulSet"}

// String is the step as its progress line shows it.
func (st Step) String() string {
	switch {
	case st.Scale != nil:
		return fmt.Sprintf("scale %s %s/%s to %d", st.Scale.Kind, st.Scale.Namespace, st.Scale.Name, *st.Scale.Replicas)
	case st.Delete != nil:
		return fmt.Sprintf("delete %s %s/%s", st.Delete.Kind, st.Delete.Namespace, st.Delete.Name)
	case st.DeleteNodes != nil:
		return "delete " + describeNodeSelector(st.DeleteNodes)
	case st.Wait != nil:
		return fmt.Sprintf("wait %v", st.Wait.Duration)
	case st.Licenses != nil:
		return st.Licenses.String()
	case len(st.AddNodes) > 0:
		return "add " + describeAddedNodes(st.AddNodes)
	case st.Deschedule != nil:
		return st.Deschedule.String()
	}
	return "empty step"
}

// validateSteps checks that each step is one thing, on an object of the
// scenario (objects holds their objectKey; nil skips that check) or on a
// feature of its licenses.
func validateSteps(steps []Step, objects, nodes sets.Set[string], licenses *Licenses) field.ErrorList {
	var errs field.ErrorList
	for i := range steps {
		st := &steps[i]
		p := field.NewPath("steps").Index(i)
		set := 0
		if st.Scale != nil {
			set++
			sp := p.Child("scale")
			errs = append(errs, validateObjectRef(&st.Scale.ObjectRef, sp, scalableKinds, objects)...)
			if st.Scale.Replicas == nil {
				errs = append(errs, field.Required(sp.Child("replicas"), ""))
			} else {
				errs = append(errs, validateReplicas(st.Scale.Replicas, sp.Child("replicas"))...)
			}
		}
		if st.Delete != nil {
			set++
			errs = append(errs, validateObjectRef(st.Delete, p.Child("delete"), nil, objects)...)
		}
		if st.DeleteNodes != nil {
			set++
			dp := p.Child("deleteNodes")
			errs = append(errs, validateNodeSelector(st.DeleteNodes, dp, nodes)...)
			if len(st.DeleteNodes.Names) == 0 && len(st.DeleteNodes.MatchLabels) == 0 && len(st.DeleteNodes.MatchExpressions) == 0 {
				errs = append(errs, field.Required(dp, "names or labels of the nodes to delete: an empty selector would delete every node"))
			}
		}
		if st.Wait != nil {
			set++
			if st.Wait.Duration <= 0 || st.Wait.Duration > MaxWait {
				errs = append(errs, field.Invalid(p.Child("wait"), st.Wait.Duration.String(), fmt.Sprintf("must be positive and at most %v", MaxWait)))
			}
		}
		if st.Licenses != nil {
			set++
			errs = append(errs, validateLicensesStep(st.Licenses, licenses, p.Child("licenses"))...)
		}
		if st.AddNodes != nil {
			set++
		}
		if st.Deschedule != nil {
			set++
			errs = append(errs, validateDeschedule(st.Deschedule, p.Child("deschedule"))...)
		}
		if set != 1 {
			errs = append(errs, field.Invalid(p, set, "a step has exactly one of scale, delete, deleteNodes, wait, licenses, addNodes, deschedule"))
		}
	}
	return errs
}

// validateObjectRef checks r; kinds, when not nil, are the only kinds of the
// kind table it may name.
func validateObjectRef(r *workload.ObjectRef, path *field.Path, tableKinds []string, objects sets.Set[string]) field.ErrorList {
	_, inTable := kinds[r.Kind]
	switch {
	case r.Kind == "":
		return field.ErrorList{field.Required(path.Child("kind"), "the kind of an object of the scenario")}
	case tableKinds != nil && inTable && !slices.Contains(tableKinds, r.Kind):
		return field.ErrorList{field.NotSupported(path.Child("kind"), r.Kind, tableKinds)}
	case r.Name == "":
		return field.ErrorList{field.Required(path.Child("name"), "")}
	case objects != nil && !objects.Has(objectKey(r.Kind, orDefault(r.Namespace), r.Name)):
		return field.ErrorList{field.NotFound(path.Child("name"), fmt.Sprintf("%s %s/%s is not an object of the scenario", r.Kind, orDefault(r.Namespace), r.Name))}
	}
	return nil
}

// describeNodeSelector is "nodes a, b with k=v", "nodes with k=v".
func describeNodeSelector(s *NodeSelector) string {
	d := "nodes"
	if len(s.Names) > 0 {
		d += " " + strings.Join(s.Names, ", ")
	}
	if sel := s.LabelSelector().String(); sel != "" {
		d += " with " + sel
	}
	return d
}
