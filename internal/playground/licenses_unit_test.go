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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// TestLicenseServer: the server reports each feature's seats and its
// outside checkouts, listed from a host no pod can be named after; a change
// shows in the next read, and waitPublished returns after the second read
// that follows it, not before.
func TestLicenseServer(t *testing.T) {
	s := newLicenseServer(&scenario.Licenses{Features: []scenario.LicenseFeature{
		{Name: "MATLAB", Seats: ptr.To[int32](10), CheckedOutElsewhere: ptr.To[int32](4)},
		{Name: "ANSYS", Seats: ptr.To[int32](2)},
	}})
	read := func() map[string]source.Feature {
		t.Helper()
		r, err := s.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r.Features
	}
	want := map[string]source.Feature{
		"MATLAB": {Total: 10, InUse: 4, Checkouts: []source.Checkout{{User: "desktop", Host: outsideHost, Count: 4}}},
		"ANSYS":  {Total: 2},
	}
	if diff := cmp.Diff(want, read(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("first reading (-want +got):\n%s", diff)
	}
	for _, host := range []string{outsideHost, strings.ToLower(outsideHost)} {
		if len(validation.IsDNS1123Subdomain(host)) == 0 {
			t.Errorf("host %q could be a pod's name", host)
		}
	}

	before, err := s.checkOut("MATLAB", 0)
	if err != nil || before != 1 {
		t.Fatalf("checkOut: %d reads before, error %v; want 1, nil", before, err)
	}
	if _, err := s.checkOut("SIMULINK", 1); err == nil {
		t.Error("checkOut of a feature the server does not have: no error")
	}
	waited := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { waited <- s.waitPublished(ctx, before) }()
	if got := read()["MATLAB"]; got.InUse != 0 || len(got.Checkouts) != 0 {
		t.Errorf("reading after the change: %+v, want none in use and no checkout", got)
	}
	select {
	case err := <-waited:
		t.Fatalf("waitPublished returned after one read since the change (error %v), want two", err)
	case <-time.After(100 * time.Millisecond):
	}
	read()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if f, ok := s.feature("MATLAB"); !ok || f.Total != 10 || f.InUse != 0 {
		t.Errorf("feature MATLAB: %+v, %v; want 10 issued, none in use", f, ok)
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

// TestRequestedSeats: a pod's seats are its containers' and sidecars'
// limits together, or an init container's when more; requests count
// where no limit is given.
func TestRequestedSeats(t *testing.T) {
	const name = "licenses.adminsched.io/matlab"
	c := func(limit, request int64, sidecar bool) corev1.Container {
		ctr := corev1.Container{Name: "c"}
		if limit > 0 {
			ctr.Resources.Limits = corev1.ResourceList{name: *resource.NewQuantity(limit, resource.DecimalSI)}
		}
		if request > 0 {
			ctr.Resources.Requests = corev1.ResourceList{name: *resource.NewQuantity(request, resource.DecimalSI)}
		}
		if sidecar {
			ctr.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		return ctr
	}
	tests := []struct {
		name       string
		init, main []corev1.Container
		want       int64
	}{
		{name: "none", main: []corev1.Container{c(0, 0, false)}, want: 0},
		{name: "containers", main: []corev1.Container{c(1, 0, false), c(2, 0, false)}, want: 3},
		{name: "a request alone", main: []corev1.Container{c(0, 2, false)}, want: 2},
		{name: "a sidecar adds", init: []corev1.Container{c(1, 0, true)}, main: []corev1.Container{c(1, 0, false)}, want: 2},
		{name: "an init container asks more", init: []corev1.Container{c(4, 0, false)}, main: []corev1.Container{c(1, 0, false)}, want: 4},
	}
	for _, tt := range tests {
		p := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: tt.init, Containers: tt.main}}
		if got := requestedSeats(p, name); got != tt.want {
			t.Errorf("%s: %d seats, want %d", tt.name, got, tt.want)
		}
	}
}
