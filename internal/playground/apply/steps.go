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
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

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

var (
	nodesResource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podsResource  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// DeleteNodes deletes the nodes that names (when not empty) and selector
// both select, then every pod bound to them at once (grace period 0). The
// cluster's pod garbage collector would delete those pods too, but later:
// deleting them here means the step's settling sees their replacements,
// not pods still bound to a node that is gone. It returns the nodes
// deleted, by name; selecting none is an error, since the step would then
// show nothing.
func (a *Applier) DeleteNodes(ctx context.Context, names []string, selector string) ([]string, error) {
	list, err := a.dynamic.Resource(nodesResource).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var deleted []string
	for _, n := range list.Items {
		if len(names) > 0 && !slices.Contains(names, n.GetName()) {
			continue
		}
		if err := a.dynamic.Resource(nodesResource).Delete(ctx, n.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting node %s: %w", n.GetName(), err)
		}
		deleted = append(deleted, n.GetName())
	}
	if len(deleted) == 0 {
		return nil, fmt.Errorf("no node matches: names %v, labels %q", names, selector)
	}
	for _, node := range deleted {
		pods, err := a.dynamic.Resource(podsResource).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return deleted, fmt.Errorf("listing the pods of node %s: %w", node, err)
		}
		for _, p := range pods.Items {
			err := a.dynamic.Resource(podsResource).Namespace(p.GetNamespace()).Delete(ctx, p.GetName(), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err != nil && !apierrors.IsNotFound(err) {
				return deleted, fmt.Errorf("deleting pod %s/%s of node %s: %w", p.GetNamespace(), p.GetName(), node, err)
			}
		}
	}
	klog.FromContext(ctx).V(2).Info("Deleted nodes", "nodes", deleted)
	return deleted, nil
}
