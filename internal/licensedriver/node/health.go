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
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// The services of the plugin's gRPC health service (grpc.health.v1.Health),
// for the kubelet's grpc probes (their `service` field).
const (
	// HealthLiveness is SERVING while both of the plugin's sockets answer:
	// the registration socket (GetInfo) and the DRA socket it names (a
	// connection is accepted). A socket deleted from under the plugin (the
	// kubelet's directory wiped) turns it NOT_SERVING, and a restart
	// recreates it. The empty service name means the same.
	HealthLiveness = "liveness"
	// HealthReadiness is SERVING once the kubelet has registered the plugin
	// (its last NotifyRegistrationStatus said registered) while liveness
	// holds: a rolling update removes the old pod only when the new one is
	// registered.
	HealthReadiness = "readiness"
)

// defaultHealthPeriod is how often the sockets are checked; the probes of
// the manifests ask every 10 s.
const defaultHealthPeriod = 5 * time.Second

// healthChecker keeps the statuses of a grpc/health server up to date: it
// checks the sockets every period and learns of the kubelet's registration
// from the plugin's own gRPC servers (intercept).
type healthChecker struct {
	logger     klog.Logger
	server     *health.Server
	registrar  string // the registration socket's path
	driverName string

	mu         sync.Mutex
	alive      bool
	registered bool
}

func newHealthChecker(logger klog.Logger, registrarSocket, driverName string) *healthChecker {
	h := &healthChecker{logger: logger, server: health.NewServer(), registrar: registrarSocket, driverName: driverName}
	h.publishLocked()
	return h
}

// intercept is a unary interceptor of the plugin's gRPC servers: it records
// what the kubelet says of the registration.
func (h *healthChecker) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if status, ok := req.(*registerapi.RegistrationStatus); ok && info.FullMethod == registerapi.Registration_NotifyRegistrationStatus_FullMethodName {
		h.mu.Lock()
		defer h.mu.Unlock()
		if status.PluginRegistered != h.registered {
			if status.PluginRegistered {
				h.logger.Info("The kubelet registered the plugin")
			} else {
				h.logger.Info("The kubelet did not register the plugin", "reason", status.Error)
			}
		}
		h.registered = status.PluginRegistered
		h.publishLocked()
	}
	return resp, err
}

// run checks the sockets now and every period until ctx is done, then sets
// every service NOT_SERVING.
func (h *healthChecker) run(ctx context.Context, period time.Duration) {
	defer h.server.Shutdown()
	for {
		err := h.checkSockets(ctx, period)
		h.mu.Lock()
		if alive := err == nil; alive != h.alive && ctx.Err() == nil {
			if alive {
				h.logger.V(2).Info("The plugin's sockets answer")
			} else {
				h.logger.Info("The plugin's sockets do not answer: health NOT_SERVING", "err", err)
			}
			h.alive = alive
			h.publishLocked()
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

func (h *healthChecker) publishLocked() {
	status := func(ok bool) healthpb.HealthCheckResponse_ServingStatus {
		if ok {
			return healthpb.HealthCheckResponse_SERVING
		}
		return healthpb.HealthCheckResponse_NOT_SERVING
	}
	h.server.SetServingStatus("", status(h.alive))
	h.server.SetServingStatus(HealthLiveness, status(h.alive))
	h.server.SetServingStatus(HealthReadiness, status(h.alive && h.registered))
}

// checkSockets asks the registration socket for the plugin's info, as the
// kubelet does, and connects to the DRA socket it names. It does not call
// the DRA service: a prepare in progress holds its lock, and a probe must
// not wait for it.
func (h *healthChecker) checkSockets(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+h.registrar, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("registration socket %s: %w", h.registrar, err)
	}
	defer func() { _ = conn.Close() }()
	info, err := registerapi.NewRegistrationClient(conn).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		return fmt.Errorf("registration socket %s: GetInfo: %w", h.registrar, err)
	}
	if info.Name != h.driverName {
		return fmt.Errorf("registration socket %s: names driver %q, want %q", h.registrar, info.Name, h.driverName)
	}
	c, err := (&net.Dialer{}).DialContext(ctx, "unix", info.Endpoint)
	if err != nil {
		return fmt.Errorf("DRA socket: %w", err)
	}
	return c.Close()
}

// serveHealth serves h's health service on l until ctx is done; a server
// that fails calls fatal.
func serveHealth(ctx context.Context, h *healthChecker, l net.Listener, period time.Duration, fatal func(error)) (stop func()) {
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, h.server)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		h.run(ctx, period)
	}()
	go func() {
		defer wg.Done()
		if err := s.Serve(l); err != nil && ctx.Err() == nil {
			fatal(fmt.Errorf("health gRPC server failed: %w", err))
		}
	}()
	h.logger.Info("Serving the gRPC health service", "address", l.Addr().String(), "services", []string{HealthLiveness, HealthReadiness})
	return func() {
		s.Stop()
		wg.Wait()
	}
}
