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
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestCatchUp: a target is judged once its cache shows what the API server
// said when the Wait began, or anything later.
func TestCatchUp(t *testing.T) {
	at := func(rv string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}} }
	store := func(rv string) cache.Store {
		s := cache.NewStore(cache.MetaNamespaceKeyFunc)
		s.Bookmark(rv)
		return s
	}
	exists := barrier{read: true, exists: true, resourceVersion: "20"}
	tests := []struct {
		name  string
		b     barrier
		store cache.Store
		obj   runtime.Object
		want  bool
	}{
		{"not read", barrier{err: errors.New("refused")}, store("30"), at("30"), false},
		{"cached at that version", exists, store(""), at("20"), true},
		{"cached later", exists, store(""), at("100"), true},
		{"cached before", exists, store("19"), at("19"), false},
		{"not cached yet", exists, store("19"), nil, false},
		{"not cached: deleted since", exists, store("21"), nil, true},
		{"gone, still cached", barrier{read: true}, store("30"), at("10"), false},
		{"gone, not cached", barrier{read: true}, store(""), nil, true},
		{"caught up before", barrier{read: true, exists: true, resourceVersion: "20", caughtUp: true}, store(""), nil, true},
		{"versions not numbers, equal", barrier{read: true, exists: true, resourceVersion: "a"}, store(""), at("a"), true},
		{"versions not numbers, different", barrier{read: true, exists: true, resourceVersion: "a"}, store("b"), at("b"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			if got := b.catchUp(tt.store, tt.obj); got != tt.want {
				t.Errorf("catchUp: %v, want %v", got, tt.want)
			}
			if b.caughtUp != tt.want {
				t.Errorf("remembered %v, want %v", b.caughtUp, tt.want)
			}
		})
	}
}

// TestWaitFresh: a Wait right after a write judges the object as written,
// not as the cache held it before: just created (not in the cache yet: it
// would look deleted), just scaled (old replicas), just deleted (still
// there, its pod bound). The watcher's watch of Deployments is slowed down
// so that its cache lags behind for sure.
func TestWaitFresh(t *testing.T) {
	ctx := needCluster(t)
	cfg := rest.CopyConfig(testConfig)
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil && req.URL.Query().Get("watch") == "true" && strings.HasSuffix(req.URL.Path, "/deployments") {
				resp.Body = slowBody{resp.Body}
			}
			return resp, err
		})
	}
	w := startWatcher(t, ctx, cfg, nil)
	ns := namespace(t, ctx)
	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		t.Cleanup(cancel)
		return c
	}
	// The first Wait on a resource starts its informer, which lists what
	// is there: an object created before is in the cache.
	if err := w.Wait(ctx, []Target{createDeployment(t, ctx, ns, "warm", 0)}, nil); err != nil {
		t.Fatal(err)
	}
	web := createDeployment(t, ctx, ns, "web", 1)
	if err := w.Wait(short(), []Target{web}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait right after create: %v, want the timeout: its pod is never bound", err)
	}
	bind(t, ctx, &podsOf(t, ctx, ns, 1)[0])
	if err := w.Wait(ctx, []Target{web}, nil); err != nil {
		t.Fatal(err)
	}

	// The deployment controller writes the object's status meanwhile: retry
	// the scale on a conflict, as kubectl scale does.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := testClient.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 2
		_, err = testClient.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(short(), []Target{web}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait right after scaling up: %v, want the timeout: the new pod is never bound", err)
	}

	if err := testClient.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(ctx, []Target{web}, nil); err != nil {
		t.Fatal(err)
	}
	list, err := testClient.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		t.Errorf("Wait right after delete returned with %d pods of the Deployment left", len(list.Items))
	}
}

// slowBody hands on what it reads a while after it arrived.
type slowBody struct{ io.ReadCloser }

func (b slowBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	time.Sleep(300 * time.Millisecond)
	return n, err
}

// TestWaitWrittenReadsWhatWasWritten: waiting after each of three objects
// reads each once (3 GETs, where Wait reads 1+2+3), and a target written
// again is read again, as a scale in TestWaitFresh needs.
func TestWaitWrittenReadsWhatWasWritten(t *testing.T) {
	ctx := needCluster(t)
	var mu sync.Mutex
	gets := map[string]int{}
	cfg := rest.CopyConfig(testConfig)
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && req.URL.Query().Get("watch") == "" && strings.Contains(req.URL.Path, "/deployments/") {
				mu.Lock()
				gets[req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]]++
				mu.Unlock()
			}
			return next.RoundTrip(req)
		})
	}
	read := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		c := maps.Clone(gets)
		clear(gets)
		return c
	}
	w := startWatcher(t, ctx, cfg, nil)
	ns := namespace(t, ctx)
	var targets []Target
	for _, name := range []string{"a", "b", "c"} {
		targets = append(targets, createDeployment(t, ctx, ns, name, 0))
		if err := w.WaitWritten(ctx, targets, targets[len(targets)-1:], nil); err != nil {
			t.Fatal(err)
		}
		if got, want := read(), map[string]int{name: 1}; !maps.Equal(got, want) {
			t.Errorf("after creating %s: reads %v, want %v", name, got, want)
		}
	}
	if err := w.WaitWritten(ctx, targets, targets[1:2], nil); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), map[string]int{"b": 1}; !maps.Equal(got, want) {
		t.Errorf("with b written again: reads %v, want %v", got, want)
	}
	if err := w.Wait(ctx, targets, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), map[string]int{"a": 1, "b": 1, "c": 1}; !maps.Equal(got, want) {
		t.Errorf("Wait: reads %v, want every target once %v", got, want)
	}
}
