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
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// TestWaitBound: Wait returns once a Deployment's pods are bound (by the
// test, as a scheduler would), not before; Pods lists them by target, then
// by name, with a bare Pod's.
func TestWaitBound(t *testing.T) {
	ctx := needCluster(t)
	w := startWatcher(t, ctx, testConfig, nil)
	ns := namespace(t, ctx)
	web := createDeployment(t, ctx, ns, "web", 3)
	solo := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "solo"},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	solo, err := testClient.CoreV1().Pods(ns).Create(ctx, solo, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := []workload.Target{web, {APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "solo", Resource: podsResource, UID: solo.UID}}
	var progress bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- w.Wait(ctx, targets, &progress) }()
	pods := podsOf(t, ctx, ns, 4)
	var want []string
	for _, p := range pods {
		if p.Name != "solo" {
			want = append(want, "Deployment/web "+p.Name+" on "+nodeName)
		}
	}
	slices.Sort(want)
	want = append(want, "Pod/solo solo on "+nodeName)
	for _, p := range pods {
		if p.Name == "solo" {
			continue
		}
		select {
		case err := <-done:
			t.Fatalf("Wait returned (%v) with pod %s not bound", err, p.Name)
		case <-time.After(200 * time.Millisecond):
		}
		bind(t, ctx, &p)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range w.Pods(targets) {
		got = append(got, op.Object+" "+op.Pod.Name+" on "+op.Pod.Spec.NodeName)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pods after Wait (-want +got):\n%s", diff)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if lines[len(lines)-1] != "scheduled 4/4 pods" {
		t.Errorf("progress %q, want it to end with scheduled 4/4 pods", lines)
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] {
			t.Errorf("progress line %q written twice in a row", lines[i])
		}
	}
}

// TestWaitPending: with one of two replicas neither bound nor
// unschedulable, Wait ends with the timeout error naming the Deployment
// and what it wants; once that pod is marked unschedulable, Wait returns.
func TestWaitPending(t *testing.T) {
	ctx := needCluster(t)
	w := startWatcher(t, ctx, testConfig, nil)
	ns := namespace(t, ctx)
	web := createDeployment(t, ctx, ns, "web", 2)
	pods := podsOf(t, ctx, ns, 2)
	bind(t, ctx, &pods[0])

	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var progress bytes.Buffer
	err := w.Wait(short, []workload.Target{web}, &progress)
	want := fmt.Sprintf("waiting for the controllers and the scheduler (scheduled 1/2 pods; not settled: Deployment %s/web (wants 2 pods, has 2 (1 pending))): context deadline exceeded", ns)
	if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v\nwant: %s", err, want)
	}

	markUnschedulable(t, ctx, &pods[1])
	if err := w.Wait(ctx, []workload.Target{web}, &progress); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("scheduled 1/2 pods\nscheduled 1/2 pods, 1 unschedulable\n", progress.String()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// TestWaitDeleted: a deleted Deployment is settled once its pods are gone,
// also after the garbage collector deleted its ReplicaSet: the pods still
// count as its own. A finalizer holds them while the ReplicaSet goes.
func TestWaitDeleted(t *testing.T) {
	ctx := needCluster(t)
	w := startWatcher(t, ctx, testConfig, nil)
	ns := namespace(t, ctx)
	web := createDeployment(t, ctx, ns, "web", 2)
	pods := podsOf(t, ctx, ns, 2)
	const finalizer = "example.com/hold"
	for _, p := range pods {
		patch := fmt.Appendf(nil, `{"metadata":{"finalizers":[%q]}}`, finalizer)
		if _, err := testClient.CoreV1().Pods(ns).Patch(ctx, p.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		bind(t, ctx, &p)
	}
	if err := w.Wait(ctx, []workload.Target{web}, nil); err != nil {
		t.Fatal(err)
	}

	if err := testClient.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	// The garbage collector deletes the ReplicaSet, then marks the pods.
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		rs, err := testClient.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(rs.Items) > 0 {
			return false, err
		}
		list, err := testClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return !slices.ContainsFunc(list.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp == nil }), nil
	})
	if err != nil {
		t.Fatalf("waiting for the garbage collector: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := w.Wait(short, []workload.Target{web}, nil); err == nil || !strings.Contains(err.Error(), "wants deleted, 2 pods left") {
		t.Fatalf("Wait with the pods held: %v, want the timeout naming the 2 pods left", err)
	}

	for _, p := range pods {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := testClient.CoreV1().Pods(ns).Patch(ctx, p.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Wait(ctx, []workload.Target{web}, nil); err != nil {
		t.Fatal(err)
	}
	list, err := testClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		t.Errorf("Wait returned with %d pods of the deleted Deployment left", len(list.Items))
	}
}

// TestWaitAlive: alive's error ends a wait that would otherwise last, at
// once when it fails from the start, and within its check interval when it
// fails later.
func TestWaitAlive(t *testing.T) {
	ctx := needCluster(t)
	var dead atomic.Bool
	exited := errors.New("kube-controller-manager exited")
	w := startWatcher(t, ctx, testConfig, func() error {
		if dead.Load() {
			return exited
		}
		return nil
	})
	ns := namespace(t, ctx)
	web := createDeployment(t, ctx, ns, "web", 1)
	podsOf(t, ctx, ns, 1) // never bound

	for _, later := range []bool{false, true} {
		t.Run(fmt.Sprintf("later=%v", later), func(t *testing.T) {
			dead.Store(!later)
			wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- w.Wait(wctx, []workload.Target{web}, nil) }()
			if later {
				time.Sleep(200 * time.Millisecond)
				dead.Store(true)
			}
			if err := <-done; !errors.Is(err, exited) || wctx.Err() != nil {
				t.Errorf("Wait: %v, want alive's error before the deadline", err)
			}
		})
	}
}

// TestWaitOtherKinds: an object of a kind with no rule of its own and no
// pods (a Service; a PriorityClass, not namespaced) is settled through a
// dynamic informer; a resource that is not served never syncs, and the
// timeout says so. After Stop, Wait refuses.
func TestWaitOtherKinds(t *testing.T) {
	ctx := needCluster(t)
	w := startWatcher(t, ctx, testConfig, nil)
	ns := namespace(t, ctx)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	svc, err := testClient.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 1000}
	pc, err = testClient.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := []workload.Target{
		{APIVersion: "v1", Kind: "Service", Namespace: ns, Name: "web", Resource: corev1.SchemeGroupVersion.WithResource("services"), UID: svc.UID},
		{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: pc.Name, Resource: schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), UID: pc.UID},
	}
	if err := w.Wait(ctx, targets, nil); err != nil {
		t.Fatal(err)
	}

	widget := workload.Target{APIVersion: "example.com/v1", Kind: "Widget", Namespace: ns, Name: "w",
		Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, UID: "u"}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := w.Wait(short, []workload.Target{widget}, nil); err == nil || !strings.Contains(err.Error(), "the informer of widgets.example.com has not synced") {
		t.Errorf("Wait on a resource not served: %v, want the timeout naming its informer", err)
	}

	w.Stop()
	if err := w.Wait(ctx, targets, nil); err == nil || !strings.Contains(err.Error(), "the watcher is stopped") {
		t.Errorf("Wait after Stop: %v, want the watcher is stopped", err)
	}
}

// TestWaitInvalidTarget: a target missing what the watcher needs is refused
// with the field named.
func TestWaitInvalidTarget(t *testing.T) {
	w := &Watcher{subscribers: map[chan struct{}]struct{}{}}
	tests := []struct {
		name   string
		target workload.Target
		want   string
	}{
		{"no kind", workload.Target{Name: "a", Resource: podsResource, UID: "u"}, "target 0 ( a): kind is not set"},
		{"no name", workload.Target{Kind: "Pod", Resource: podsResource, UID: "u"}, "target 0 (Pod ): name is not set"},
		{"no resource", workload.Target{Kind: "Pod", Name: "a", UID: "u"}, `target 0 (Pod a): resource is "/, Resource=": want the version and resource the object is served at`},
		{"no uid", workload.Target{Kind: "Pod", Name: "a", Resource: podsResource}, "target 0 (Pod a): uid is not set: want the UID of the object as created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := w.Wait(context.Background(), []workload.Target{tt.target}, nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Wait: %v, want %s", err, tt.want)
			}
		})
	}
}

// TestPods: by target in the order given, then by pod name; pods being
// deleted left out; a pod of two targets listed under each.
func TestPods(t *testing.T) {
	w := newCacheWatcher()
	w.intermediateChanged(&appsv1.ReplicaSet{ObjectMeta: objMeta("rs", "web")})
	addPod(t, w, "web-b", "rs")
	addPod(t, w, "web-a", "rs")
	gone := &corev1.Pod{ObjectMeta: objMeta("web-c", "rs")}
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if err := w.pods.Add(gone); err != nil {
		t.Fatal(err)
	}
	addPod(t, w, "a-solo", "")
	targets := []workload.Target{target("Deployment", "apps", "deployments", "web"), target("Pod", "", "pods", "a-solo"),
		target("ReplicaSet", "apps", "replicasets", "rs")}
	var got []string
	for _, op := range w.Pods(targets) {
		got = append(got, op.Object+" "+op.Pod.Name)
	}
	want := []string{"Deployment/web web-a", "Deployment/web web-b", "Pod/a-solo a-solo", "ReplicaSet/rs web-a", "ReplicaSet/rs web-b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pods (-want +got):\n%s", diff)
	}
}
