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

package settle

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// BenchmarkEvaluate is one evaluation of a Deployment of 100 pods, with a
// snapshot base of 0 or 50,000 other pods (each of its own DaemonSet) in
// the cache: the cost follows the targets' pods, not the cluster's.
func BenchmarkEvaluate(b *testing.B) {
	for _, base := range []int{0, 50_000} {
		b.Run(fmt.Sprintf("base=%d", base), func(b *testing.B) {
			w := newCacheWatcher()
			add := func(name string, controller types.UID) {
				p := &corev1.Pod{ObjectMeta: objMeta(name, controller), Spec: corev1.PodSpec{NodeName: "n"}}
				if err := w.pods.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for i := range base {
				add(fmt.Sprintf("base-%d", i), types.UID(fmt.Sprintf("ds-%d", i%5000)))
			}
			w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs", "web")})
			for i := range 100 {
				add(fmt.Sprintf("web-%d", i), "rs")
			}
			d := &appsv1.Deployment{ObjectMeta: objMeta("web", ""), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](100)}}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
			if err != nil {
				b.Fatal(err)
			}
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			if err := store.Add(&unstructured.Unstructured{Object: m}); err != nil {
				b.Fatal(err)
			}
			resource := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
			targets := []workload.Target{{Kind: "Deployment", Namespace: "ns", Name: "web", Resource: resource, UID: "web"}}
			stores := map[schema.GroupVersionResource]cache.Store{resource: store}
			if pending := w.evaluate(targets, stores, nil, nil); len(pending) > 0 {
				b.Fatalf("not settled: %v", pending)
			}
			b.ReportAllocs()
			for b.Loop() {
				w.evaluate(targets, stores, nil, nil)
			}
		})
	}
}

// BenchmarkWaitSettled is one Wait on 20 Services already settled, on the
// test control plane: what a Wait costs beyond its evaluations, its read of
// each target (see fresh.go), one at a time or 8.
func BenchmarkWaitSettled(b *testing.B) {
	if testConfig == nil {
		b.Skip("needs the control plane (not with -short)")
	}
	ctx := b.Context()
	w, err := Start(ctx, testConfig, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	ns := fmt.Sprintf("bench-%d", namespaces.Add(1))
	if _, err := testClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var targets []workload.Target
	for i := range 20 {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("s%d", i)},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		svc, err := testClient.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		targets = append(targets, workload.Target{APIVersion: "v1", Kind: "Service", Namespace: ns, Name: svc.Name,
			Resource: corev1.SchemeGroupVersion.WithResource("services"), UID: svc.UID})
	}
	for _, readers := range []int{1, 8} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			w.readers = readers
			for b.Loop() {
				if err := w.Wait(ctx, targets, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
