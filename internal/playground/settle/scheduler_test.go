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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// fakeCache dumps one node holding pods, and drops gone once dropAfter
// dumps were read.
type fakeCache struct {
	pods      []*corev1.Pod
	gone      string
	dropAfter int32
	dumps     atomic.Int32
}

func (c *fakeCache) Dump() *cache.Dump {
	n := c.dumps.Add(1)
	ni := framework.NewNodeInfo()
	for _, p := range c.pods {
		if p.Name == c.gone && n > c.dropAfter {
			continue
		}
		ni.AddPod(p)
	}
	return &cache.Dump{Nodes: map[string]*framework.NodeInfo{"n1": ni}}
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)}, Spec: corev1.PodSpec{NodeName: "n1"}}
}

// TestCacheCaughtUp: the wait ends once the scheduler's cache no longer
// holds a pod the watcher saw go, ignores other namespaces, and names the
// pod when the time is up.
func TestCacheCaughtUp(t *testing.T) {
	live := func(p *corev1.Pod) bool { return p.Name != "deleted" }
	ns := sets.New("default")
	tests := []struct {
		name     string
		cache    *fakeCache
		wantErr  string
		minDumps int32
	}{
		{name: "every pod live", cache: &fakeCache{pods: []*corev1.Pod{pod("default", "a")}}, minDumps: 1},
		{name: "a gone pod in another namespace", cache: &fakeCache{pods: []*corev1.Pod{pod("kube-system", "deleted")}}, minDumps: 1},
		{name: "the cache drops the gone pod later", cache: &fakeCache{pods: []*corev1.Pod{pod("default", "a"), pod("default", "deleted")}, gone: "deleted", dropAfter: 3}, minDumps: 4},
		{name: "the cache keeps it", cache: &fakeCache{pods: []*corev1.Pod{pod("default", "deleted")}}, wantErr: "waiting for the scheduler to see pod default/deleted go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err := cacheCaughtUp(ctx, tt.cache, live, ns)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got := tt.cache.dumps.Load(); got < tt.minDumps {
					t.Errorf("returned after %d reads of the cache, want at least %d", got, tt.minDumps)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// fakeQueue lists pods as the scheduler's queue would, emptied of them
// after emptyAfter reads.
type fakeQueue struct {
	active, backoff, inFlight []*corev1.Pod
	emptyAfter                int32
	reads                     atomic.Int32
}

func (q *fakeQueue) list(pods []*corev1.Pod) []*corev1.Pod {
	if q.emptyAfter > 0 && q.reads.Load() > q.emptyAfter {
		return nil
	}
	return pods
}
func (q *fakeQueue) PodsInActiveQ() []*corev1.Pod  { q.reads.Add(1); return q.list(q.active) }
func (q *fakeQueue) PodsInBackoffQ() []*corev1.Pod { return q.list(q.backoff) }
func (q *fakeQueue) InFlightPods() []*corev1.Pod   { return q.list(q.inFlight) }

// TestQueueDrained: the wait lasts while a pod of the scenario's
// namespaces is queued, backing off or being scheduled, or is on a node in
// the scheduler's cache but unbound in the watcher's view; other
// namespaces do not count.
func TestQueueDrained(t *testing.T) {
	unbound := func() []workload.OwnedPod {
		p := pod("default", "seated")
		p.Spec.NodeName = ""
		return []workload.OwnedPod{{Pod: p, Object: "Job/j"}}
	}
	none := func() []workload.OwnedPod { return nil }
	ns := sets.New("default")
	tests := []struct {
		name    string
		queue   *fakeQueue
		cache   *fakeCache
		owned   func() []workload.OwnedPod
		wantErr string
	}{
		{name: "idle", queue: &fakeQueue{}, cache: &fakeCache{}, owned: none},
		{name: "another namespace's pods", queue: &fakeQueue{active: []*corev1.Pod{pod("other", "a")}, backoff: []*corev1.Pod{pod("other", "b")}}, cache: &fakeCache{}, owned: none},
		{name: "a pod backing off, then tried", queue: &fakeQueue{backoff: []*corev1.Pod{pod("default", "b")}, emptyAfter: 5}, cache: &fakeCache{}, owned: none},
		{name: "a pod queued", queue: &fakeQueue{active: []*corev1.Pod{pod("default", "a")}}, cache: &fakeCache{}, owned: none, wantErr: "waiting for the scheduler to try pod default/a"},
		{name: "a pod backing off", queue: &fakeQueue{backoff: []*corev1.Pod{pod("default", "b")}}, cache: &fakeCache{}, owned: none, wantErr: "waiting for the scheduler to try pod default/b"},
		{name: "a pod in flight", queue: &fakeQueue{inFlight: []*corev1.Pod{pod("default", "c")}}, cache: &fakeCache{}, owned: none, wantErr: "waiting for the scheduler to try pod default/c"},
		{name: "bound in the cache, not yet seen bound", queue: &fakeQueue{}, cache: &fakeCache{pods: []*corev1.Pod{pod("default", "seated")}}, owned: unbound,
			wantErr: "waiting for the binding of pod default/seated to show"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err := queueDrained(ctx, tt.queue, tt.cache, tt.owned, ns)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if tt.queue.emptyAfter > 0 && tt.queue.reads.Load() <= tt.queue.emptyAfter {
					t.Errorf("returned after %d reads of the queue, before it was empty", tt.queue.reads.Load())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
