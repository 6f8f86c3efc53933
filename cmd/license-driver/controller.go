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

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

type controllerFlags struct {
	configFile, kubeconfig string
	leaderElect            bool
	leaseNamespace         string
	leaseName              string
	leaseDuration          time.Duration
	renewDeadline          time.Duration
	retryPeriod            time.Duration
	httpAddress            string
}

func newControllerCommand() *cobra.Command {
	f := controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Publish the license features' seats and DeviceClasses (run as a Deployment)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.configFile, "config", "", "The LicenseDriverConfiguration file (required).")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Kubeconfig file; empty: the in-cluster configuration.")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "Elect a leader among the replicas with a Lease, so that one publishes at a time.")
	fs.StringVar(&f.leaseNamespace, "leader-elect-resource-namespace", "", "Namespace of the Lease; empty: the POD_NAMESPACE environment variable, else kube-system.")
	fs.StringVar(&f.leaseName, "leader-elect-resource-name", "license-driver", "Name of the Lease.")
	fs.DurationVar(&f.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a non-leader waits after the last renewal before taking over.")
	fs.DurationVar(&f.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader retries renewing before it gives up (and exits).")
	fs.DurationVar(&f.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How long to wait between tries to acquire or renew.")
	fs.StringVar(&f.httpAddress, "http-address", "127.0.0.1:8080", "Address of plain-HTTP /metrics and /healthz, loopback by default (the manifests serve them on --secure-port instead); empty: no server.")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// checkLeaderElection checks what client-go's elector requires of the
// durations (it panics otherwise), by the flags' names.
func (f controllerFlags) checkLeaderElection() error {
	switch {
	case f.retryPeriod <= 0:
		return fmt.Errorf("--leader-elect-retry-period (%s) must be positive", f.retryPeriod)
	case f.leaseDuration <= f.renewDeadline:
		return fmt.Errorf("--leader-elect-lease-duration (%s) must be longer than --leader-elect-renew-deadline (%s)", f.leaseDuration, f.renewDeadline)
	case float64(f.renewDeadline) <= leaderelection.JitterFactor*float64(f.retryPeriod):
		return fmt.Errorf("--leader-elect-renew-deadline (%s) must be longer than %.1f times --leader-elect-retry-period (%s)", f.renewDeadline, leaderelection.JitterFactor, f.retryPeriod)
	}
	return nil
}

func runController(ctx context.Context, f controllerFlags) error {
	logger := klog.FromContext(ctx)
	if f.leaderElect {
		if err := f.checkLeaderElection(); err != nil {
			return err
		}
	}
	cfg, err := loadConfig(f.configFile)
	if err != nil {
		return err
	}
	src, err := source.New(cfg)
	if err != nil {
		return err
	}
	restConfig, err := clientConfig(f.kubeconfig, "license-driver-controller")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	// Not stopped by SIGTERM (ctx) but on return: releasing the Lease after
	// SIGTERM records an event.
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "license-driver-controller"})
	controller.RegisterMetrics()
	if f.httpAddress != "" {
		if err := serveHTTP(ctx, f.httpAddress); err != nil {
			return err
		}
	}
	opts := controller.Options{Client: client, Config: cfg, Source: src, Recorder: recorder}
	run := stopQuietly(func(ctx context.Context) error { return controller.Run(ctx, opts) })
	if !f.leaderElect {
		return run(ctx)
	}
	return runLeaderElected(ctx, f, client, recorder, func(ctx context.Context) error {
		logger.Info("Leading: publishing license seats", "driver", licensedriver.DriverName)
		return run(ctx)
	})
}

// stopQuietly returns run, except that an error once ctx is done is the
// stop's (SIGTERM while the controller waits for its informers), not a
// failure: the process exits 0 as on any SIGTERM.
func stopQuietly(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		err := run(ctx)
		if err != nil && ctx.Err() != nil {
			klog.FromContext(ctx).V(2).Info("Stopped while starting", "err", err)
			return nil
		}
		return err
	}
}

// runLeaderElected runs run while this replica holds the Lease. Losing the
// Lease ends the process with an error, as kube-controller-manager does:
// the next leader starts from the API server's state.
func runLeaderElected(ctx context.Context, f controllerFlags, client kubernetes.Interface, recorder record.EventRecorder, run func(context.Context) error) error {
	ns := f.leaseNamespace
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		ns = "kube-system"
	}
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, f.leaseName, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: recorder})
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The role runs on the elector's goroutine and may still be ending when
	// the elector returns: its result is shared under mu.
	var (
		mu     sync.Mutex
		runErr error
		// roleEnded: the role returned on its own, before the elector
		// cancelled its context.
		roleEnded bool
		lost      bool
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   f.leaseDuration,
		RenewDeadline:   f.renewDeadline,
		RetryPeriod:     f.retryPeriod,
		ReleaseOnCancel: true,
		Name:            f.leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				err := run(leading)
				mu.Lock()
				runErr = err
				roleEnded = leading.Err() == nil
				mu.Unlock()
				// A role that ends ends the election: the Lease is released.
				cancel()
			},
			OnStoppedLeading: func() {
				mu.Lock()
				defer mu.Unlock()
				// Neither SIGTERM nor the role ended the election. Not
				// ctx.Err(): when the Lease is lost, the elector cancels
				// the role's context, and the role, ending, cancels ctx,
				// possibly before this runs.
				lost = parent.Err() == nil && !roleEnded
			},
		},
	})
	if err != nil {
		// RunOrDie would panic here.
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	if lost {
		return errors.New("lost the leader election Lease")
	}
	return runErr
}

func serveHTTP(ctx context.Context, address string) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	l, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--http-address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "HTTP server failed")
		}
	}()
	return nil
}
