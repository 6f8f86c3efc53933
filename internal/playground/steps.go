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
	"slices"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
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
	Delete *ObjectRef `json:"delete,omitempty"`
	// Wait sleeps, e.g. until a maintenance window opens.
	Wait *metav1.Duration `json:"wait,omitempty"`
}

// ObjectRef names an object of the scenario.
type ObjectRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Namespace defaults to DefaultNamespace.
	Namespace string `json:"namespace,omitempty"`
}

// ScaleStep is a workload and its new replica count.
type ScaleStep struct {
	ObjectRef `json:",inline"`
	Replicas  *int32 `json:"replicas"`
}

// MaxWait caps a wait step.
const MaxWait = time.Hour

var (
	scalableKinds  = []string{"Deployment", "ReplicaSet", "StatefulSet"}
	deletableKinds = []string{"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Service"}
)

// String is the step as its progress line shows it.
func (st Step) String() string {
	switch {
	case st.Scale != nil:
		return fmt.Sprintf("scale %s %s/%s to %d", st.Scale.Kind, st.Scale.Namespace, st.Scale.Name, *st.Scale.Replicas)
	case st.Delete != nil:
		return fmt.Sprintf("delete %s %s/%s", st.Delete.Kind, st.Delete.Namespace, st.Delete.Name)
	case st.Wait != nil:
		return fmt.Sprintf("wait %v", st.Wait.Duration)
	}
	return "empty step"
}

// objectKey is how steps name the objects of a scenario.
func objectKey(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }

// validateSteps defaults the namespaces and checks that each step is one
// thing, on an object of the scenario (objects holds their objectKey).
func validateSteps(steps []Step, objects sets.Set[string]) field.ErrorList {
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
			errs = append(errs, validateObjectRef(st.Delete, p.Child("delete"), deletableKinds, objects)...)
		}
		if st.Wait != nil {
			set++
			if st.Wait.Duration <= 0 || st.Wait.Duration > MaxWait {
				errs = append(errs, field.Invalid(p.Child("wait"), st.Wait.Duration.String(), fmt.Sprintf("must be positive and at most %v", MaxWait)))
			}
		}
		if set != 1 {
			errs = append(errs, field.Invalid(p, set, "a step has exactly one of scale, delete, wait"))
		}
	}
	return errs
}

func validateObjectRef(r *ObjectRef, path *field.Path, kinds []string, objects sets.Set[string]) field.ErrorList {
	if r.Namespace == "" {
		r.Namespace = DefaultNamespace
	}
	switch {
	case r.Kind == "":
		return field.ErrorList{field.Required(path.Child("kind"), "one of "+strings.Join(kinds, ", "))}
	case !slices.Contains(kinds, r.Kind):
		return field.ErrorList{field.NotSupported(path.Child("kind"), r.Kind, kinds)}
	case r.Name == "":
		return field.ErrorList{field.Required(path.Child("name"), "")}
	case objects != nil && !objects.Has(objectKey(r.Kind, r.Namespace, r.Name)):
		return field.ErrorList{field.NotFound(path.Child("name"), fmt.Sprintf("%s %s/%s is not an object of the scenario", r.Kind, r.Namespace, r.Name))}
	}
	return nil
}

// RunSteps runs the scenario's steps in order. After each it waits until
// every object of refs is settled, writes the pods per node to a.Progress
// and records them.
func (a *Applier) RunSteps(ctx context.Context, s *Scenario, refs []Ref, nodes []string) ([]StepResult, error) {
	var results []StepResult
	for i, st := range s.Steps {
		a.progressf("step %d/%d: %s\n", i+1, len(s.Steps), st)
		if err := a.runStep(ctx, st); err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		if err := a.wait(ctx, refs, a.Progress); err != nil {
			return results, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		o, err := observe(ctx, a.Client, refs, a.replicaSets)
		if err != nil {
			return results, err
		}
		counts, _ := perNode(nodes, o.ownedPods(refs))
		var b strings.Builder
		for _, n := range counts {
			fmt.Fprintf(&b, " %s=%d", n.Name, n.Pods)
		}
		a.progressf("pods per node:%s\n", b.String())
		results = append(results, StepResult{Step: st.String(), Nodes: counts})
	}
	return results, nil
}

func (a *Applier) progressf(format string, args ...any) {
	if a.Progress != nil {
		fmt.Fprintf(a.Progress, format, args...)
	}
}

func (a *Applier) scale(ctx context.Context, r *ScaleStep) error {
	type scaler interface {
		GetScale(ctx context.Context, name string, opts metav1.GetOptions) (*autoscalingv1.Scale, error)
		UpdateScale(ctx context.Context, name string, scale *autoscalingv1.Scale, opts metav1.UpdateOptions) (*autoscalingv1.Scale, error)
	}
	var c scaler
	switch r.Kind {
	case "Deployment":
		c = a.Client.AppsV1().Deployments(r.Namespace)
	case "ReplicaSet":
		c = a.Client.AppsV1().ReplicaSets(r.Namespace)
	case "StatefulSet":
		c = a.Client.AppsV1().StatefulSets(r.Namespace)
	default:
		return fmt.Errorf("%s cannot be scaled", r.Kind)
	}
	scale, err := c.GetScale(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	scale.Spec.Replicas = *r.Replicas
	_, err = c.UpdateScale(ctx, r.Name, scale, metav1.UpdateOptions{})
	return err
}

func (a *Applier) runStep(ctx context.Context, st Step) error {
	logger := klog.FromContext(ctx)
	switch {
	case st.Wait != nil:
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(st.Wait.Duration):
			return nil
		}
	case st.Scale != nil:
		r := st.Scale
		// The controller updates the object's status meanwhile.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return a.scale(ctx, r) })
		if err != nil {
			return fmt.Errorf("scaling %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
		}
		logger.V(2).Info("Scaled", "kind", r.Kind, "object", klog.KRef(r.Namespace, r.Name), "replicas", *r.Replicas)
		return nil
	case st.Delete != nil:
		r := st.Delete
		// The garbage collector deletes the dependents afterwards: the
		// wait that follows sees them go.
		background := metav1.DeletePropagationBackground
		opts := metav1.DeleteOptions{PropagationPolicy: &background}
		var err error
		switch r.Kind {
		case "Pod":
			err = a.Client.CoreV1().Pods(r.Namespace).Delete(ctx, r.Name, opts)
		case "Service":
			err = a.Client.CoreV1().Services(r.Namespace).Delete(ctx, r.Name, opts)
		case "Deployment":
			err = a.Client.AppsV1().Deployments(r.Namespace).Delete(ctx, r.Name, opts)
		case "ReplicaSet":
			err = a.Client.AppsV1().ReplicaSets(r.Namespace).Delete(ctx, r.Name, opts)
		case "StatefulSet":
			err = a.Client.AppsV1().StatefulSets(r.Namespace).Delete(ctx, r.Name, opts)
		case "DaemonSet":
			err = a.Client.AppsV1().DaemonSets(r.Namespace).Delete(ctx, r.Name, opts)
		case "Job":
			err = a.Client.BatchV1().Jobs(r.Namespace).Delete(ctx, r.Name, opts)
		default:
			err = fmt.Errorf("%s cannot be deleted", r.Kind)
		}
		if err != nil {
			return fmt.Errorf("deleting %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
		}
		logger.V(2).Info("Deleted", "kind", r.Kind, "object", klog.KRef(r.Namespace, r.Name))
		return nil
	}
	return fmt.Errorf("empty step")
}
