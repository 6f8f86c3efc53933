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

package node

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
)

// TestHealthService drives the health service as the kubelet's grpc probes
// do, over TCP, while the test plays the kubelet on the plugin's sockets:
// liveness is SERVING once the sockets answer, readiness once the kubelet
// has registered the plugin, and not after it reported a failed
// registration; a registration socket deleted from under the plugin turns
// both NOT_SERVING; an unknown service is NotFound. With a pod UID, so that
// the rolling-update socket name is the one checked.
func TestHealthService(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	root := t.TempDir()
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		KubeClient:     fake.NewClientset(),
		Config:         testConfig(t),
		PluginDataDir:  filepath.Join(root, "plugin"),
		RegistrarDir:   filepath.Join(root, "registry"),
		CDIDir:         filepath.Join(root, "cdi"),
		PodUID:         types.UID("6a0e8b7c-health"),
		HealthListener: l,
		healthPeriod:   50 * time.Millisecond,
	}
	if err := os.Mkdir(o.RegistrarDir, 0o750); err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- Run(ctx, o) }()

	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	probe := healthpb.NewHealthClient(conn)
	check := func(service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		resp, err := probe.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		return resp.GetStatus(), err
	}
	waitFor := func(service string, want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		var got healthpb.HealthCheckResponse_ServingStatus
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			select {
			case err := <-runErr:
				t.Fatalf("Run returned: %v", err)
			default:
			}
			if got, err = check(service); err == nil && got == want {
				return
			}
		}
		t.Fatalf("health of %q: %v, %v; want %v within 30s", service, got, err, want)
	}
	waitFor(HealthLiveness, healthpb.HealthCheckResponse_SERVING)
	waitFor("", healthpb.HealthCheckResponse_SERVING)
	if got, err := check(HealthReadiness); err != nil || got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("readiness before the kubelet registered the plugin: %v, %v; want NOT_SERVING", got, err)
	}
	if _, err := check("licenses"); status.Code(err) != codes.NotFound {
		t.Errorf("an unknown service: %v, want NotFound", err)
	}

	// The kubelet: GetInfo, then NotifyRegistrationStatus.
	regSocket := filepath.Join(o.RegistrarDir, licensedriver.DriverName+"-"+string(o.PodUID)+"-reg.sock")
	registrar := registerapi.NewRegistrationClient(dial(t, regSocket))
	if _, err := registrar.GetInfo(ctx, &registerapi.InfoRequest{}); err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	if _, err := registrar.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatalf("NotifyRegistrationStatus: %v", err)
	}
	waitFor(HealthReadiness, healthpb.HealthCheckResponse_SERVING)
	if _, err := registrar.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: false, Error: "version not supported"}); err == nil {
		t.Errorf("NotifyRegistrationStatus of a failed registration succeeded")
	}
	waitFor(HealthReadiness, healthpb.HealthCheckResponse_NOT_SERVING)
	if _, err := registrar.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatalf("NotifyRegistrationStatus: %v", err)
	}
	waitFor(HealthReadiness, healthpb.HealthCheckResponse_SERVING)

	// The kubelet's registration directory emptied: the kubelet can no
	// longer find the plugin, and only a restart brings the socket back.
	if err := os.Remove(regSocket); err != nil {
		t.Fatal(err)
	}
	waitFor(HealthLiveness, healthpb.HealthCheckResponse_NOT_SERVING)
	waitFor(HealthReadiness, healthpb.HealthCheckResponse_NOT_SERVING)

	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	if c, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		_ = c.Close()
		t.Errorf("the health port %s still accepts connections after Run returned", l.Addr())
	}
}
