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
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// The cluster tests run one real control plane for the test binary: etcd,
// kube-apiserver, kube-controller-manager and KWOK from KUBEBUILDER_ASSETS
// (default ../../../bin). No scheduler runs: the tests bind pods, or mark
// them unschedulable, themselves. With -short only the pure tests run.

const nodeName = "n1"

var (
	testConfig *rest.Config
	testClient kubernetes.Interface
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if testing.Short() {
		return m.Run()
	}
	assets, err := localcluster.AssetsFromEnv("../../../bin")
	if err != nil {
		fmt.Fprintf(os.Stderr, "the settle tests run a real control plane (or use -short): %v\n", err)
		return 1
	}
	logDir, err := os.MkdirTemp("", "settle-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(logDir) }()
	cp, err := localcluster.Start(assets, logDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cp.Stop() }()
	testConfig = cp.Config
	testClient = kubernetes.NewForConfigOrDie(cp.Config)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
	if _, err := testClient.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// needCluster skips t under -short and returns a context for it.
func needCluster(t *testing.T) context.Context {
	t.Helper()
	if testConfig == nil {
		t.Skip("needs the control plane (not with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func startWatcher(t *testing.T, ctx context.Context, cfg *rest.Config, alive func() error) *Watcher {
	t.Helper()
	w, err := Start(ctx, cfg, alive)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

var namespaces atomic.Int32

// namespace creates a namespace named after the test (and numbered: a test
// may run more than once, -count).
func namespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), namespaces.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := testClient.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func createDeployment(t *testing.T, ctx context.Context, ns, name string, replicas int32) workload.Target {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	d, err := testClient.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return workload.Target{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name,
		Resource: appsv1.SchemeGroupVersion.WithResource("deployments"), UID: d.UID}
}

// podsOf waits until ns holds n pods not being deleted and returns them.
func podsOf(t *testing.T, ctx context.Context, ns string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := testClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods = pods[:0]
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				pods = append(pods, p)
			}
		}
		return len(pods) == n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d pods in %s (have %d): %v", n, ns, len(pods), err)
	}
	return pods
}

// bind does what a scheduler does: binds pod to the node.
func bind(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}
	if err := testClient.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// markUnschedulable does what a scheduler does for a pod no node fits.
func markUnschedulable(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	p := pod.DeepCopy()
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"})
	if _, err := testClient.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// listCounter counts the requests that list pods: LISTs, and the watches
// that stream the current pods first (sendInitialEvents, client-go's
// WatchListClient), which are lists too.
type listCounter struct {
	mu    sync.Mutex
	lists int
}

// wrap is a rest.Config's WrapTransport: each client gets its own.
func (c *listCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/pods") &&
			(q.Get("watch") == "" || q.Get("sendInitialEvents") == "true") {
			c.mu.Lock()
			c.lists++
			c.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (c *listCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists
}

// TestWaitListsNoPods: evaluations read the informers' caches. While a
// Deployment's pods are bound one at a time, each bind an evaluation, no
// request lists pods beyond the informer's first list.
func TestWaitListsNoPods(t *testing.T) {
	ctx := needCluster(t)
	counter := &listCounter{}
	cfg := rest.CopyConfig(testConfig)
	cfg.WrapTransport = counter.wrap
	w := startWatcher(t, ctx, cfg, nil)
	atStart := counter.count()
	if atStart == 0 {
		t.Fatal("no request listed pods at Start: the counter does not see the informer's list")
	}
	ns := namespace(t, ctx)
	const replicas = 5
	target := createDeployment(t, ctx, ns, "web", replicas)
	done := make(chan error, 1)
	go func() { done <- w.Wait(ctx, []workload.Target{target}, nil) }()
	for _, p := range podsOf(t, ctx, ns, replicas) {
		bind(t, ctx, &p)
		time.Sleep(100 * time.Millisecond) // lets each bind be its own evaluation
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	evaluations := w.evaluations
	w.mu.Unlock()
	if evaluations < replicas {
		t.Errorf("%d evaluations, want at least %d (one per bind): the test did not exercise re-evaluation", evaluations, replicas)
	}
	if got := counter.count(); got != atStart {
		t.Errorf("%d requests listed pods during %d evaluations, want none beyond Start's %d", got-atStart, evaluations, atStart)
	}
}

// TestStartUnreachable: Start gives up when ctx ends before the informers
// synced, and says which.
func TestStartUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	w, err := Start(ctx, &rest.Config{Host: "http://127.0.0.1:1"}, nil)
	if err == nil {
		w.Stop()
		t.Fatal("Start succeeded with no API server")
	}
	if !strings.Contains(err.Error(), "syncing the pod, ReplicaSet and Job informers") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start: %v, want the informers named and the deadline", err)
	}
}
