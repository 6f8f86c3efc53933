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
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func get(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestServeHTTP: /healthz answers, /metrics serves the controller's
// license_driver_* metrics with what a running controller set (here on a
// fake clientset and a static source), and the server stops with its
// context.
func TestServeHTTP(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	addr := freeAddress(t)
	controller.RegisterMetrics()
	if err := serveHTTP(ctx, addr); err != nil {
		t.Fatal(err)
	}

	cfg, err := config.Decode([]byte(strings.ReplaceAll(staticConfig, "%SEATS%", "3")))
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	client := fake.NewClientset()
	go func() { done <- controller.Run(runCtx, controller.Options{Client: client, Config: cfg, Source: src}) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	}()

	// Wait until the pool is published, so that the controller is past its
	// start when the test ends.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		slices, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		return err == nil && len(slices.Items) > 0, err
	})
	if err != nil {
		t.Fatalf("waiting for the pool's ResourceSlice: %v", err)
	}

	code, body, err := get(ctx, "http://"+addr+"/healthz")
	if err != nil || code != http.StatusOK || body != "ok" {
		t.Errorf("GET /healthz: %d %q %v, want 200 \"ok\"", code, body, err)
	}

	pool := cfg.Features[0].Pool
	want := []string{
		fmt.Sprintf(`license_driver_seats{pool=%q,state="total"} 3`, pool),
		fmt.Sprintf(`license_driver_seats{pool=%q,state="free"} 3`, pool),
		fmt.Sprintf(`license_driver_seats{pool=%q,state="allocated"} 0`, pool),
		fmt.Sprintf(`license_driver_seats{pool=%q,state="external"} 0`, pool),
		fmt.Sprintf(`license_driver_seats{pool=%q,state="blocked"} 0`, pool),
		`license_driver_source_reads_total{result="success"}`,
		`license_driver_source_stale 0`,
		"license_driver_source_last_success_timestamp_seconds ",
		"# HELP license_driver_seats [ALPHA] ",
	}
	var missing []string
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		code, body, err := get(ctx, "http://"+addr+"/metrics")
		if err != nil || code != http.StatusOK {
			missing = []string{fmt.Sprintf("GET /metrics: %d %v", code, err)}
			return false, nil
		}
		missing = nil
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = append(missing, w)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		t.Errorf("/metrics lacks %q: %v", missing, err)
	}

	// A second server on the same address fails, naming the flag.
	if err := serveHTTP(ctx, addr); err == nil || !strings.Contains(err.Error(), "--http-address") {
		t.Errorf("a second server on %s: %v, want an error naming --http-address", addr, err)
	}

	cancel()
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := get(context.Background(), "http://"+addr+"/healthz")
		return err != nil, nil
	})
	if err != nil {
		t.Errorf("the server still answers after its context ended: %v", err)
	}
}

// TestRunLeaderElected: the role runs while this replica holds the Lease;
// what ends it decides the exit: SIGTERM (the context) ends it cleanly and
// releases the Lease, a failing role ends it with the role's error, a Lease
// taken by another replica ends it with an error (the process restarts and
// follows). Run with -race: the role and the elector end on different
// goroutines.
func TestRunLeaderElected(t *testing.T) {
	failed := errors.New("the publisher failed")
	for _, tc := range []struct {
		name string
		// role is the role's body once leading; end acts from outside:
		// cancel is the process's context; taken, once set, makes the
		// leader's renewals conflict.
		role    func(ctx context.Context) error
		end     func(t *testing.T, cancel context.CancelFunc, client *fake.Clientset, taken *atomic.Bool)
		wantErr string
		// released: the Lease has no holder after the return.
		released bool
	}{
		{
			name:     "SIGTERM",
			role:     func(ctx context.Context) error { <-ctx.Done(); return nil },
			end:      func(_ *testing.T, cancel context.CancelFunc, _ *fake.Clientset, _ *atomic.Bool) { cancel() },
			released: true,
		},
		{
			name:     "the role fails",
			role:     func(context.Context) error { return failed },
			end:      func(*testing.T, context.CancelFunc, *fake.Clientset, *atomic.Bool) {},
			wantErr:  failed.Error(),
			released: true,
		},
		{
			name: "the Lease is taken",
			role: func(ctx context.Context) error { <-ctx.Done(); return nil },
			end: func(t *testing.T, _ context.CancelFunc, client *fake.Clientset, taken *atomic.Bool) {
				leases := client.CoordinationV1().Leases("ns")
				lease, err := leases.Get(context.Background(), "license-driver", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				// Renewals conflict from before the takeover, and the
				// takeover goes to the tracker, past the reactor: were it
				// an Update followed by taken.Store, a renewal in between
				// would win the Lease back, and the elector, still the
				// holder, would retry its release's conflicts forever (the
				// fake ignores the release's deadline).
				taken.Store(true)
				lease.Spec.HolderIdentity = ptr.To("another-replica")
				lease.Spec.LeaseDurationSeconds = ptr.To[int32](600)
				lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(time.Minute)}
				if err := client.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), lease, "ns"); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "lost the leader election Lease",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			client := fake.NewClientset()
			// The fake does not check resourceVersions: once the Lease is
			// taken, refuse the leader's renewals as the API server does
			// when the Lease changed under it.
			var taken atomic.Bool
			client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
				if !taken.Load() {
					return false, nil, nil
				}
				return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), "license-driver", errors.New("the object has been modified"))
			})
			// A renew deadline of seconds: a starved leader (-race on a
			// busy machine) must not lose the Lease in the other cases.
			f := controllerFlags{leaseNamespace: "ns", leaseName: "license-driver",
				leaseDuration: 4 * time.Second, renewDeadline: 2 * time.Second, retryPeriod: 100 * time.Millisecond}
			leading := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- runLeaderElected(ctx, f, client, &record.FakeRecorder{}, func(ctx context.Context) error {
					close(leading)
					return tc.role(ctx)
				})
			}()
			select {
			case <-leading:
			case err := <-done:
				t.Fatalf("returned before leading: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("never led")
			}
			tc.end(t, cancel, client, &taken)
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("did not return")
			}
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && !strings.Contains(got, tc.wantErr)) {
				t.Errorf("returned %v, want %q", err, tc.wantErr)
			}
			lease, err := client.CoordinationV1().Leases("ns").Get(context.Background(), "license-driver", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); (holder == "") != tc.released {
				t.Errorf("the Lease is held by %q after the return; want released: %v", holder, tc.released)
			}
		})
	}
}

// TestStopQuietly: an error of the controller once its context is done
// (SIGTERM during its start) is not a failure; any other error is.
func TestStopQuietly(t *testing.T) {
	failed := errors.New("the publisher failed")
	for _, tc := range []struct {
		name    string
		stopped bool
		err     error
		want    error
	}{
		{name: "stopped while starting", stopped: true, err: fmt.Errorf("sync ResourceSlice informer: %w", context.Canceled)},
		{name: "stopped", stopped: true},
		{name: "fails while running", err: failed, want: failed},
		{name: "returns", err: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if tc.stopped {
				cancel()
			}
			got := stopQuietly(func(context.Context) error { return tc.err })(ctx)
			if !errors.Is(got, tc.want) || (tc.want == nil && got != nil) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
