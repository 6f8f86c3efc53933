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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

func applyTestDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

var (
	stepsTestDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	stepsTestReplicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

func TestScale(t *testing.T) {
	ctx := context.Background()
	a, client := applyTestApplier(t)
	if _, err := a.Apply(ctx, applyTestObject(t, applyTestDeployment("scale", "web", 1))); err != nil {
		t.Fatal(err)
	}
	ref := workload.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "scale", Name: "web"}
	for _, replicas := range []int32{3, 0} {
		if err := a.Scale(ctx, ref, replicas); err != nil {
			t.Fatal(err)
		}
		u, err := client.Resource(stepsTestDeployments).Namespace("scale").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if got != int64(replicas) {
			t.Errorf("spec.replicas = %d after Scale to %d", got, replicas)
		}
	}
}

func TestScaleErrors(t *testing.T) {
	ctx := context.Background()
	a, _ := applyTestApplier(t)
	if _, err := a.Apply(ctx, applyTestObject(t, applyTestConfigMap("", "not-scalable", nil))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		ref      workload.ObjectRef
		replicas int32
		want     string
	}{
		{
			name: "no scale subresource",
			ref:  workload.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Name: "not-scalable"},
			want: "scaling ConfigMap default/not-scalable: kind ConfigMap has no scale subresource",
		},
		{
			name: "no such object",
			ref:  workload.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "missing"},
			want: `scaling Deployment default/missing: deployments.apps "missing" not found`,
		},
		{
			name: "unknown kind",
			ref:  workload.ObjectRef{APIVersion: "example.com/v1", Kind: "Foo", Namespace: "x", Name: "y"},
			want: "scaling Foo x/y: no resource for kind Foo in example.com/v1: is its CRD in the scenario before it?",
		},
		{
			name: "namespace on a cluster-scoped kind",
			ref:  workload.ObjectRef{APIVersion: "v1", Kind: "Node", Namespace: "x", Name: "y"},
			want: `scaling Node x/y: metadata.namespace is "x", but kind Node is cluster-scoped: remove the namespace`,
		},
		{
			name:     "negative replicas",
			ref:      workload.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "missing"},
			replicas: -1,
			want:     "scaling Deployment default/missing: replicas is -1, must be at least 0",
		},
		{name: "no name", ref: workload.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment"}, want: "scaling Deployment : name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := a.Scale(ctx, tt.ref, tt.replicas)
			if err == nil {
				t.Fatal("Scale succeeded")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDelete: the object is gone when Delete returns (background: neither
// the foreground nor the orphan finalizer holds it), and its dependents go
// afterwards (not orphaned).
func TestDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, client := applyTestApplier(t)
	if _, err := a.Apply(ctx, applyTestObject(t, applyTestDeployment("delete", "web", 1))); err != nil {
		t.Fatal(err)
	}
	replicaSets := client.Resource(stepsTestReplicaSets).Namespace("delete")
	count := func(ctx context.Context) (int, error) {
		l, err := replicaSets.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
	// The deployment controller makes the dependent to be deleted.
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := count(ctx)
		return n > 0, err
	}); err != nil {
		t.Fatalf("waiting for the Deployment's ReplicaSet: %v", err)
	}
	if err := a.Delete(ctx, workload.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "delete", Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(stepsTestDeployments).Namespace("delete").Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get after Delete: %v, want not found", err)
	}
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := count(ctx)
		return n == 0, err
	}); err != nil {
		t.Errorf("waiting for the garbage collector to delete the ReplicaSet: %v", err)
	}

	err := a.Delete(ctx, workload.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "delete", Name: "web"})
	if diff := cmp.Diff(`deleting Deployment delete/web: deployments.apps "web" not found`, stepsTestErrString(err)); diff != "" {
		t.Errorf("deleting again (-want +got):\n%s", diff)
	}
}

func stepsTestErrString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
