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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// Scale sets the replicas of ref's object through its scale subresource,
// retrying when its controller updated it meanwhile.
func (a *Applier) Scale(ctx context.Context, ref workload.ObjectRef, replicas int32) error {
	res, ns, err := a.stepsResource(ctx, ref)
	if err != nil {
		return fmt.Errorf("scaling %s: %w", applyDescribe(ref.Kind, ref.Namespace, ref.Name), err)
	}
	what := applyDescribe(ref.Kind, ns, ref.Name)
	if replicas < 0 {
		return fmt.Errorf("scaling %s: replicas is %d, must be at least 0", what, replicas)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := res.Get(ctx, ref.Name, metav1.GetOptions{}, "scale")
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(scale.Object, int64(replicas), "spec", "replicas"); err != nil {
			return err
		}
		_, err = res.Update(ctx, scale, metav1.UpdateOptions{FieldManager: FieldManager}, "scale")
		return err
	})
	if apierrors.IsNotFound(err) {
		// Not found is the object, or only its scale subresource.
		if _, getErr := res.Get(ctx, ref.Name, metav1.GetOptions{}); getErr == nil {
			err = fmt.Errorf("kind %s has no scale subresource", ref.Kind)
		}
	}
	if err != nil {
		return fmt.Errorf("scaling %s: %w", what, err)
	}
	klog.FromContext(ctx).V(2).Info("Scaled", "kind", ref.Kind, "object", klog.KRef(ns, ref.Name), "replicas", replicas)
	return nil
}

// Delete deletes ref's object; the garbage collector deletes its
// dependents afterwards (background propagation).
func (a *Applier) Delete(ctx context.Context, ref workload.ObjectRef) error {
	res, ns, err := a.stepsResource(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting %s: %w", applyDescribe(ref.Kind, ref.Namespace, ref.Name), err)
	}
	background := metav1.DeletePropagationBackground
	if err := res.Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return fmt.Errorf("deleting %s: %w", applyDescribe(ref.Kind, ns, ref.Name), err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted", "kind", ref.Kind, "object", klog.KRef(ns, ref.Name))
	return nil
}

// stepsResource is the client of ref's resource and ref's namespace,
// defaulted.
func (a *Applier) stepsResource(ctx context.Context, ref workload.ObjectRef) (dynamic.ResourceInterface, string, error) {
	if ref.Name == "" {
		return nil, "", fmt.Errorf("name is required")
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, "", fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
	}
	m, err := a.mapping(ctx, gv.WithKind(ref.Kind))
	if err != nil {
		return nil, "", err
	}
	return a.resource(m, ref.Namespace)
}
