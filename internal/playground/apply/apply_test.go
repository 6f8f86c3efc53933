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
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// One cluster for the whole test binary, started by the first test that
// needs it (pure tests run without one) and stopped by TestMain.
// Its logs stay when a test failed.
var applyTestCluster struct {
	once   sync.Once
	cp     *localcluster.ControlPlane
	logDir string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if c := &applyTestCluster; c.cp != nil {
		if err := c.cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the test cluster: %v\n", err)
		}
		if code == 0 {
			_ = os.RemoveAll(c.logDir)
		} else {
			fmt.Fprintf(os.Stderr, "test cluster logs: %s\n", c.logDir)
		}
	}
	os.Exit(code)
}

// applyTestConfig starts the shared cluster if needed: etcd and
// kube-apiserver from KUBEBUILDER_ASSETS (default ../../../bin).
func applyTestConfig(t *testing.T) *localcluster.ControlPlane {
	t.Helper()
	c := &applyTestCluster
	c.once.Do(func() {
		var assets string
		if assets, c.err = localcluster.AssetsFromEnv("../../../bin"); c.err != nil {
			return
		}
		if c.logDir, c.err = os.MkdirTemp("", "playground-apply-test-"); c.err == nil {
			c.cp, c.err = localcluster.Start(assets, c.logDir)
		}
	})
	if c.err != nil {
		t.Fatalf("this test needs a real control plane: %v", c.err)
	}
	return c.cp
}

// applyTestApplier is a new Applier on the shared cluster and a dynamic
// client to check what it did.
func applyTestApplier(t *testing.T) (*Applier, dynamic.Interface) {
	t.Helper()
	cp := applyTestConfig(t)
	a, err := New(cp.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, dynamic.NewForConfigOrDie(cp.Config)
}

// applyTestObject is a typed object (TypeMeta set) as Apply takes it.
func applyTestObject(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		t.Fatalf("test object %s has no TypeMeta", u.GetName())
	}
	return u
}

func applyTestConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       data,
	}
}

// TestApplyScenarioKinds is the measure of done: a scenario holding
// kinds no code of this package names (a PriorityClass, a labelled
// Namespace, a PodDisruptionBudget, a CRD and an object of it, a Deployment
// and a Service) applies, listed so that only Order makes it work: the
// custom resource before its CRD, everything before its namespace.
func TestApplyScenarioKinds(t *testing.T) {
	ctx := context.Background()
	a, client := applyTestApplier(t)
	const ns = "kinds"
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": "w1"}, "spec": map[string]any{"size": int64(3)}}}
	objs := []*unstructured.Unstructured{
		applyTestObject(t, applyTestDeployment(ns, "web", 2)),
		widget,
		applyTestObject(t, &schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: "kinds-high"}, Value: 1000}),
		applyTestObject(t, &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}),
		applyTestObject(t, &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}),
		applyTestObject(t, &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": "a"}}}),
		applyTestObject(t, applyTestCRD()),
	}
	var got []workload.Target
	for _, obj := range Order(objs) {
		applied, err := a.Apply(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		if applied.UID == "" {
			t.Errorf("%s: no UID", applied)
		}
		applied.UID = ""
		got = append(got, applied)
	}
	gvr := func(group, version, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
	}
	want := []workload.Target{
		{APIVersion: "v1", Kind: "Namespace", Resource: gvr("", "v1", "namespaces"), Name: ns},
		{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Resource: gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"), Name: "widgets.example.com"},
		{APIVersion: "apps/v1", Kind: "Deployment", Resource: gvr("apps", "v1", "deployments"), Namespace: ns, Name: "web"},
		{APIVersion: "example.com/v1", Kind: "Widget", Resource: gvr("example.com", "v1", "widgets"), Namespace: ns, Name: "w1"},
		{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Resource: gvr("scheduling.k8s.io", "v1", "priorityclasses"), Name: "kinds-high"},
		{APIVersion: "v1", Kind: "Service", Resource: gvr("", "v1", "services"), Namespace: ns, Name: "web"},
		{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Resource: gvr("policy", "v1", "poddisruptionbudgets"), Namespace: ns, Name: "web"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	// What the cluster holds is what was applied.
	for _, c := range []struct {
		res      schema.GroupVersionResource
		ns, name string
		field    []string
		want     any
	}{
		{gvr("", "v1", "namespaces"), "", ns, []string{"metadata", "labels"}, map[string]any{"team": "a", "kubernetes.io/metadata.name": ns}},
		{gvr("example.com", "v1", "widgets"), ns, "w1", []string{"spec"}, map[string]any{"size": int64(3)}},
	} {
		u, err := client.Resource(c.res).Namespace(c.ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, c.field...)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.name, strings.Join(c.field, "."), diff)
		}
	}
	// The Namespace came first: Apply had none to make.
	if diff := cmp.Diff([]string(nil), a.CreatedNamespaces()); diff != "" {
		t.Errorf("created namespaces (-want +got):\n%s", diff)
	}
}

func TestApplyErrors(t *testing.T) {
	ctx := context.Background()
	a, _ := applyTestApplier(t)
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{
			name: "cluster-scoped with a namespace",
			obj: applyTestObject(t, &schedulingv1.PriorityClass{
				TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "high"},
			}),
			want: `PriorityClass team/high: metadata.namespace is "team", but kind PriorityClass is cluster-scoped: remove the namespace`,
		},
		{name: "no name", obj: applyTestObject(t, applyTestConfigMap("default", "", nil)), want: "ConfigMap default/: metadata.name is required (server-side apply takes no generateName)"},
		{name: "nil", obj: nil, want: "no object to apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Apply(ctx, tt.obj)
			if err == nil {
				t.Fatal("Apply succeeded")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyNamespaces: no namespace means "default"; a missing one is made
// once (also by concurrent Applies) and remembered, an existing one is not
// counted as made.
func TestApplyNamespaces(t *testing.T) {
	ctx := context.Background()
	a, client := applyTestApplier(t)
	for _, cm := range []*corev1.ConfigMap{
		applyTestConfigMap("", "in-default", nil),
		applyTestConfigMap("made-1", "a", nil),
		applyTestConfigMap("made-1", "b", nil),
		applyTestConfigMap("made-2", "a", nil),
	} {
		applied, err := a.Apply(ctx, applyTestObject(t, cm))
		if err != nil {
			t.Fatal(err)
		}
		want := cm.Namespace
		if want == "" {
			want = "default"
		}
		if diff := cmp.Diff(want, applied.Namespace); diff != "" {
			t.Errorf("namespace of %s (-want +got):\n%s", cm.Name, diff)
		}
		if _, err := client.Resource(applied.Resource).Namespace(want).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
	}
	if diff := cmp.Diff([]string{"made-1", "made-2"}, a.CreatedNamespaces()); diff != "" {
		t.Errorf("created namespaces (-want +got):\n%s", diff)
	}
	// A second Applier, used concurrently, finds made-1 there and makes
	// made-3 once.
	b, _ := applyTestApplier(t)
	objs := make([]*unstructured.Unstructured, 6)
	for i := range objs {
		objs[i] = applyTestObject(t, applyTestConfigMap([]string{"made-1", "made-3"}[i%2], fmt.Sprintf("c%d", i), nil))
	}
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i := range objs {
		wg.Go(func() { _, errs[i] = b.Apply(ctx, objs[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"made-3"}, b.CreatedNamespaces()); diff != "" {
		t.Errorf("created namespaces of a second Applier (-want +got):\n%s", diff)
	}
}

// TestApplyIdempotent: applying the same object again changes nothing, not
// even its resourceVersion; a changed one is updated in place.
func TestApplyIdempotent(t *testing.T) {
	ctx := context.Background()
	a, client := applyTestApplier(t)
	get := func() *unstructured.Unstructured {
		t.Helper()
		u, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("idem").Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	obj := applyTestObject(t, applyTestConfigMap("idem", "cm", map[string]string{"k": "v1"}))
	first, err := a.Apply(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	before := get()
	again, err := a.Apply(ctx, obj)
	if err != nil {
		t.Fatalf("applying again: %v", err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("applied again (-first +again):\n%s", diff)
	}
	if diff := cmp.Diff(before.GetResourceVersion(), get().GetResourceVersion()); diff != "" {
		t.Errorf("resourceVersion after the same apply (-before +after):\n%s", diff)
	}
	changed := applyTestObject(t, applyTestConfigMap("idem", "cm", map[string]string{"k": "v2"}))
	if _, err := a.Apply(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"k": "v2"}, get().Object["data"]); diff != "" {
		t.Errorf("data after a changed apply (-want +got):\n%s", diff)
	}
}

// TestApplyConflict: a field another manager owns is not taken over.
func TestApplyConflict(t *testing.T) {
	ctx := context.Background()
	a, client := applyTestApplier(t)
	if _, err := a.Apply(ctx, applyTestObject(t, applyTestConfigMap("conflict", "cm", nil))); err != nil {
		t.Fatal(err)
	}
	theirs := applyTestObject(t, applyTestConfigMap("conflict", "cm", map[string]string{"k": "theirs"}))
	res := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("conflict")
	if _, err := res.Apply(ctx, "cm", theirs, metav1.ApplyOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Apply(ctx, applyTestObject(t, applyTestConfigMap("conflict", "cm", map[string]string{"k": "ours"})))
	if !apierrors.IsConflict(err) {
		t.Fatalf("Apply over another manager's field: got %v, want a conflict", err)
	}
	if got, prefix := err.Error(), "creating ConfigMap conflict/cm: "; !strings.HasPrefix(got, prefix) {
		t.Errorf("error %q does not start with %q", got, prefix)
	}
	u, err := res.Get(ctx, "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"k": "theirs"}, u.Object["data"]); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}
