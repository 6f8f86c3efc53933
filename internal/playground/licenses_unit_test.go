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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
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
