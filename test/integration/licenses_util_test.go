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

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// licenseServer is a license server the test drives: per feature, seats
// issued and seats checked out, or an error.
type licenseServer struct {
	mu       sync.Mutex
	features map[string]source.Feature
	err      error
	reads    int
}

func newLicenseServer(totals map[string]int) *licenseServer {
	s := &licenseServer{features: map[string]source.Feature{}}
	for name, n := range totals {
		s.features[name] = source.Feature{Total: n}
	}
	return s
}

func (s *licenseServer) Read(context.Context) (source.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.err != nil {
		return source.Reading{}, s.err
	}
	r := source.Reading{Features: map[string]source.Feature{}, Time: time.Now()}
	for name, f := range s.features {
		r.Features[name] = f
	}
	return r, nil
}

func (s *licenseServer) setInUse(feature string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.features[feature]
	f.InUse = n
	s.features[feature] = f
}

func (s *licenseServer) setError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// licenseConfig is a driver configuration for features named after the
// test (pools are cluster-wide), polled every second.
func (tc *testContext) licenseConfig(features ...string) (*config.Configuration, map[string]config.Feature) {
	return tc.licenseConfigFor(config.PerSeat, features...)
}

// licenseConfigFor is licenseConfig with seats published as devices says.
func (tc *testContext) licenseConfigFor(devices config.Devices, features ...string) (*config.Configuration, map[string]config.Feature) {
	tc.t.Helper()
	c := &config.Configuration{
		TypeMeta:     metav1.TypeMeta{APIVersion: config.APIVersion, Kind: config.Kind},
		Source:       config.Source{HTTP: &config.HTTPSource{URL: "http://licsrv.invalid/features"}},
		PollInterval: metav1.Duration{Duration: time.Second},
		SettleWindow: &metav1.Duration{},
		StaleAfter:   metav1.Duration{Duration: 3 * time.Second},
		Devices:      devices,
	}
	suffix := rand.String(5)
	for _, f := range features {
		c.Features = append(c.Features, config.Feature{Name: f, Pool: strings.ToLower(f) + "-" + suffix,
			Env: map[string]string{"LM_LICENSE_FILE": "27000@licsrv"}})
	}
	config.SetDefaults(c)
	if errs := config.Validate(c); len(errs) > 0 {
		tc.t.Fatalf("test config: %v", errs.ToAggregate())
	}
	byName := map[string]config.Feature{}
	for _, f := range c.Features {
		byName[f.Name] = f
	}
	return c, byName
}

// startLicenseController runs the driver's controller until the returned
// stop is called or the test ends.
func (tc *testContext) startLicenseController(c *config.Configuration, src source.Source) (stop func()) {
	ctx, cancel := context.WithCancel(tc.ctx)
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx, controller.Options{Client: adminClient, Config: c, Source: src}) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tc.t.Errorf("license controller: %v", err)
			}
		})
	}
	tc.t.Cleanup(stop)
	return stop
}

// waitFreeSeats waits until the published pool offers exactly free seats
// (untainted devices of the pool's current generation).
func (tc *testContext) waitFreeSeats(pool string, free int) {
	tc.t.Helper()
	got := -1
	err := wait.PollUntilContextTimeout(tc.ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		untainted, _, err := publishedSeats(ctx, pool)
		got = untainted
		return err == nil && got == free, err
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d free seats in pool %s (%d now): %v", free, pool, got, err)
	}
}

// publishedSeats counts the seats a new pod can take in pool's newest
// generation: its untainted devices, a shared device's capacity less what
// claims hold of it. It also returns every device name published.
func publishedSeats(ctx context.Context, pool string) (int, map[string]bool, error) {
	list, err := adminClient.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.driver=" + licensedriver.DriverName})
	if err != nil {
		return 0, nil, err
	}
	gen := int64(-1)
	for _, s := range list.Items {
		if s.Spec.Pool.Name == pool {
			gen = max(gen, s.Spec.Pool.Generation)
		}
	}
	free, names := 0, map[string]bool{}
	for _, s := range list.Items {
		if s.Spec.Pool.Name != pool || s.Spec.Pool.Generation != gen {
			continue
		}
		for _, d := range s.Spec.Devices {
			names[d.Name] = true
			switch {
			case len(d.Taints) > 0:
			case ptr.Deref(d.AllowMultipleAllocations, false):
				held, err := sharedHolds(ctx, pool, d.Name)
				if err != nil {
					return 0, nil, err
				}
				c := d.Capacity[seats.SeatsCapacity]
				free += max(0, int(c.Value.Value())-held)
			default:
				free++
			}
		}
	}
	return free, names, nil
}

// sharedHolds counts the allocations of a shared device, in every namespace.
func sharedHolds(ctx context.Context, pool, device string) (int, error) {
	claims, err := adminClient.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range claims.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver == licensedriver.DriverName && r.Pool == pool && r.Device == device {
				q, ok := r.ConsumedCapacity[seats.SeatsCapacity]
				if !ok {
					return 0, fmt.Errorf("claim %s/%s holds shared device %s/%s without consumed capacity", c.Namespace, c.Name, pool, device)
				}
				n += int(q.Value())
			}
		}
	}
	return n, nil
}

// licensePod is makePod asking for seats of each resource name.
func (tc *testContext) licensePod(name string, seatsOf map[string]int64) *v1.Pod {
	pod := tc.makePod(name)
	limits := v1.ResourceList{}
	for res, n := range seatsOf {
		limits[v1.ResourceName(res)] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	pod.Spec.Containers[0].Resources.Limits = limits
	pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{}
	for res, q := range pod.Spec.Containers[0].Resources.Limits {
		pod.Spec.Containers[0].Resources.Requests[res] = q
	}
	pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("100m")
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	return pod
}

// seatWatch follows, from a watch of the test namespace's ResourceClaims,
// every device of the driver that a claim holds, and records each moment
// more are held than allowed, or one device is held twice.
type seatWatch struct {
	mu         sync.Mutex
	held       map[types.UID][]string // claim -> pool/device
	limit      map[string]int         // pool -> most seats that may be held
	peak       map[string]int
	violations []string
}

func (tc *testContext) watchSeats(limit map[string]int) *seatWatch {
	tc.t.Helper()
	w := &seatWatch{held: map[types.UID][]string{}, limit: limit, peak: map[string]int{}}
	factory := informers.NewSharedInformerFactoryWithOptions(adminClient, 0, informers.WithNamespace(tc.ns))
	informer := factory.Resource().V1().ResourceClaims().Informer()
	update := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		claim := obj.(*resourceapi.ResourceClaim)
		var devices []string
		if a := claim.Status.Allocation; a != nil && claim.DeletionTimestamp == nil {
			for _, r := range a.Devices.Results {
				if r.Driver != licensedriver.DriverName {
					continue
				}
				// A shared device's capacity request of n seats is n seats.
				n := int64(1)
				if q, ok := r.ConsumedCapacity[seats.SeatsCapacity]; ok {
					n = q.Value()
				}
				for range n {
					devices = append(devices, r.Pool+"/"+r.Device)
				}
			}
		}
		w.set(claim.UID, devices)
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			w.set(obj.(*resourceapi.ResourceClaim).UID, nil)
		},
	}); err != nil {
		tc.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tc.ctx)
	factory.Start(ctx.Done())
	tc.t.Cleanup(func() { cancel(); factory.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		tc.t.Fatal("claim informer did not sync")
	}
	return w
}

func (w *seatWatch) set(uid types.UID, devices []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(devices) == 0 {
		delete(w.held, uid)
	} else {
		w.held[uid] = devices
	}
	perPool, owner := map[string]int{}, map[string]types.UID{}
	for claim, ds := range w.held {
		for _, d := range ds {
			if other, ok := owner[d]; ok && !strings.HasSuffix(d, "/"+seats.SharedDevice) {
				w.violations = append(w.violations, fmt.Sprintf("%s held by claims %s and %s", d, other, claim))
			}
			owner[d] = claim
			perPool[strings.SplitN(d, "/", 2)[0]]++
		}
	}
	for pool, n := range perPool {
		w.peak[pool] = max(w.peak[pool], n)
		if limit, ok := w.limit[pool]; ok && n > limit {
			w.violations = append(w.violations, fmt.Sprintf("%d seats of pool %s held at once, at most %d allowed", n, pool, limit))
		}
	}
}

// check fails the test on any violation and returns each pool's peak.
func (w *seatWatch) check(t testing.TB) map[string]int {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.violations {
		t.Error(v)
	}
	return w.peak
}

// setLimit changes a pool's limit, for a test whose seats change.
func (w *seatWatch) setLimit(pool string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.limit[pool] = n
}

// running returns the names of the test namespace's pods that are bound and
// not being deleted.
func (tc *testContext) boundPods() []string {
	tc.t.Helper()
	pods, err := adminClient.CoreV1().Pods(tc.ns).List(tc.ctx, metav1.ListOptions{})
	if err != nil {
		tc.t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// seatClaimPod creates a ResourceClaim for n seats of class, asked as
// capacity of one device (the Shared form), and returns a pod that uses it.
func (tc *testContext) seatClaimPod(name, class string, n int64) *v1.Pod {
	tc.t.Helper()
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tc.ns},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "seats",
			Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: class,
				AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
				Count:           1,
				Capacity: &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
					seats.SeatsCapacity: *resource.NewQuantity(n, resource.DecimalSI),
				}},
			},
		}}}},
	}
	if _, err := adminClient.ResourceV1().ResourceClaims(tc.ns).Create(tc.ctx, claim, metav1.CreateOptions{}); err != nil {
		tc.t.Fatalf("creating claim %s: %v", name, err)
	}
	pod := tc.makePod(name)
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "seats", ResourceClaimName: ptr.To(name)}}
	pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "seats"}}
	return pod
}
