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
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seats"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// licenseServer is a license server the test drives: per feature, seats
// issued and the checkouts by host, pods' and desktops', or an error. It
// answers as lmstat does: Read prints a FlexLM report and parses it with
// the driver's own parser, so that host attribution runs as in production.
type licenseServer struct {
	mu       sync.Mutex
	total    map[string]int
	desktops map[string]map[string]int // feature -> host -> seats
	pods     map[string]map[string]int // feature -> pod name -> seats
	err      error
	reads    int
}

func newLicenseServer(totals map[string]int) *licenseServer {
	return &licenseServer{total: totals, desktops: map[string]map[string]int{}, pods: map[string]map[string]int{}}
}

func (s *licenseServer) Read(context.Context) (source.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.err != nil {
		return source.Reading{}, s.err
	}
	return source.ParseLMStat(strings.NewReader(s.report()), time.Now())
}

// report is the server's lmstat -a report.
func (s *licenseServer) report() string {
	var b strings.Builder
	b.WriteString("lmstat - Copyright (c) 1989-2026 Flexera. All Rights Reserved.\nFlexible License Manager status on Sat 12/5/2026 09:00\n\n")
	b.WriteString("License server status: 27000@licsrv\n    License file(s) on licsrv: /opt/flexlm/license.dat:\n\nlicsrv: license server UP (MASTER) v11.19.6\n\n")
	b.WriteString("Vendor daemon status (on licsrv):\n\n     vendor: UP v11.19.6\n\nFeature usage info:\n\n")
	for _, name := range slices.Sorted(maps.Keys(s.total)) {
		inUse := 0
		for _, n := range s.desktops[name] {
			inUse += n
		}
		for _, n := range s.pods[name] {
			inUse += n
		}
		fmt.Fprintf(&b, "Users of %s:  (Total of %d licenses issued;  Total of %d licenses in use)\n\n", name, s.total[name], inUse)
		fmt.Fprintf(&b, "  \"%s\" v1.0, vendor: vendor, expiry: permanent(no expiration date)\n  floating license\n\n", name)
		handle := 100
		line := func(user, host string, n int) {
			handle++
			fmt.Fprintf(&b, "    %s %s /dev/pts/1 (v1.0) (licsrv/27000 %d), start Sat 12/5 8:00", user, host, handle)
			if n > 1 {
				fmt.Fprintf(&b, ", %d licenses", n)
			}
			b.WriteString("\n")
		}
		for _, host := range slices.Sorted(maps.Keys(s.desktops[name])) {
			line("ana", host, s.desktops[name][host])
		}
		for _, pod := range slices.Sorted(maps.Keys(s.pods[name])) {
			line("root", pod, s.pods[name][pod])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// desktop sets the seats of feature a desktop outside the cluster holds
// (0: it checks them in). A checkout the server has no seat for is
// refused, as a license server refuses it: the test fails.
func (s *licenseServer) desktop(t testing.TB, feature, host string, n int) {
	t.Helper()
	s.set(t, s.desktops, feature, host, n)
}

// podCheckout sets the seats of feature the pod has checked out, its host
// name being its name.
func (s *licenseServer) podCheckout(t testing.TB, feature, pod string, n int) {
	t.Helper()
	s.set(t, s.pods, feature, pod, n)
}

func (s *licenseServer) set(t testing.TB, m map[string]map[string]int, feature, host string, n int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if m[feature] == nil {
		m[feature] = map[string]int{}
	}
	inUse := 0
	for _, hosts := range []map[string]int{s.desktops[feature], s.pods[feature]} {
		for _, k := range hosts {
			inUse += k
		}
	}
	if inUse-m[feature][host]+n > s.total[feature] {
		t.Fatalf("the license server has no %d seats of %s for %s: %d of %d in use", n, feature, host, inUse, s.total[feature])
	}
	if n == 0 {
		delete(m[feature], host)
		return
	}
	m[feature][host] = n
}

func (s *licenseServer) setError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// truth is what the server has of each feature's pool, for seatcheck.
func (s *licenseServer) truth(features map[string]config.Feature) map[string]seatcheck.Truth {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]seatcheck.Truth{}
	for name, f := range features {
		t := seatcheck.Truth{Total: s.total[name]}
		for _, n := range s.desktops[name] {
			t.External += n
		}
		out[f.Pool] = t
	}
	return out
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
		// Longer than any test: checkouts are attributed by host name.
		SettleWindow: &metav1.Duration{Duration: 10 * time.Minute},
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
// (seatcheck.Free: offered devices no claim holds, a shared device's
// capacity less what claims hold of it).
func (tc *testContext) waitFreeSeats(pool string, free int) {
	tc.t.Helper()
	got := -1
	err := wait.PollUntilContextTimeout(tc.ctx, 100*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		n, _, err := publishedSeats(ctx, pool)
		got = n
		return err == nil && got == free, err
	})
	if err != nil {
		tc.t.Fatalf("waiting for %d free seats in pool %s (%d now): %v", free, pool, got, err)
	}
}

// publishedSeats counts the seats a new pod can take in pool's newest
// generation (seatcheck.Free), and returns every device name published
// there.
func publishedSeats(ctx context.Context, pool string) (int, map[string]bool, error) {
	slices, claims, err := driverState(ctx)
	if err != nil {
		return 0, nil, err
	}
	names := map[string]bool{}
	for name := range seatcheck.Published(slices)[pool].Devices {
		names[name] = true
	}
	return seatcheck.Free(pool, slices, claims), names, nil
}

// driverState lists the driver's ResourceSlices and every ResourceClaim.
func driverState(ctx context.Context) ([]*resourceapi.ResourceSlice, []*resourceapi.ResourceClaim, error) {
	list, err := adminClient.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.driver=" + licensedriver.DriverName})
	if err != nil {
		return nil, nil, err
	}
	claims, err := adminClient.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	var s []*resourceapi.ResourceSlice
	for i := range list.Items {
		s = append(s, &list.Items[i])
	}
	var c []*resourceapi.ResourceClaim
	for i := range claims.Items {
		c = append(c, &claims.Items[i])
	}
	return s, c, nil
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

// seatWatch checks the driver's promise (package seatcheck) at every change
// of a ResourceClaim of the test's namespace or of the driver's
// ResourceSlices, against what the license server has (truth, read at each
// change), and records every violation.
type seatWatch struct {
	mu         sync.Mutex
	checker    seatcheck.Checker
	checks     int
	violations []string
}

func (tc *testContext) watchSeats(truth func() map[string]seatcheck.Truth) *seatWatch {
	tc.t.Helper()
	w := &seatWatch{}
	claims := informers.NewSharedInformerFactoryWithOptions(adminClient, 0, informers.WithNamespace(tc.ns))
	slices := informers.NewSharedInformerFactoryWithOptions(adminClient, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.driver=" + licensedriver.DriverName
	}))
	claimInformer := claims.Resource().V1().ResourceClaims().Informer()
	sliceInformer := slices.Resource().V1().ResourceSlices().Informer()
	check := func() {
		state := seatcheck.State{Truth: truth()}
		for _, obj := range claimInformer.GetStore().List() {
			if c := obj.(*resourceapi.ResourceClaim); c.DeletionTimestamp == nil {
				state.Claims = append(state.Claims, c)
			}
		}
		for _, obj := range sliceInformer.GetStore().List() {
			state.Slices = append(state.Slices, obj.(*resourceapi.ResourceSlice))
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.checks++
		if err := w.checker.Check(state); err != nil {
			w.violations = append(w.violations, err.Error())
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { check() },
		UpdateFunc: func(any, any) { check() },
		DeleteFunc: func(any) { check() },
	}
	for _, i := range []cache.SharedIndexInformer{claimInformer, sliceInformer} {
		if _, err := i.AddEventHandler(handler); err != nil {
			tc.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(tc.ctx)
	claims.Start(ctx.Done())
	slices.Start(ctx.Done())
	tc.t.Cleanup(func() { cancel(); claims.Shutdown(); slices.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), claimInformer.HasSynced, sliceInformer.HasSynced) {
		tc.t.Fatal("claim and slice informers did not sync")
	}
	return w
}

// check fails the test on any violation and returns each pool's peak.
func (w *seatWatch) check(t testing.TB) map[string]int {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.violations {
		t.Error(v)
	}
	t.Logf("seat invariant checked at %d changes of claims and slices", w.checks)
	return w.checker.Peak
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
