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

package controllerrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// TestLeaderElectionRun: the role runs while this replica holds the Lease;
// what ends it decides the exit: SIGTERM (the context) ends it cleanly and
// releases the Lease, a failing role ends it with the role's error, a Lease
// taken by another replica ends it with an error (the process restarts and
// follows). Run with -race: the role and the elector end on different
// goroutines.
func TestLeaderElectionRun(t *testing.T) {
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
			l := LeaderElection{Enabled: true, Namespace: "ns", Name: "license-driver",
				LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond}
			leading := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- l.Run(ctx, client, &record.FakeRecorder{}, func(ctx context.Context) error {
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

// TestLeaderElectionNamespace: the Lease is in --leader-elect-resource-namespace,
// else in $POD_NAMESPACE (the manifests set it from the downward API), else
// in kube-system.
func TestLeaderElectionNamespace(t *testing.T) {
	for _, tc := range []struct{ name, flag, env, want string }{
		{name: "flag", flag: "ns", env: "podns", want: "ns"},
		{name: "POD_NAMESPACE", env: "podns", want: "podns"},
		{name: "neither", want: "kube-system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tc.env)
			_, ctx := ktesting.NewTestContext(t)
			client := fake.NewClientset()
			l := LeaderElection{Enabled: true, Namespace: tc.flag, Name: "lease",
				LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond}
			ran := false
			if err := l.Run(ctx, client, &record.FakeRecorder{}, func(context.Context) error { ran = true; return nil }); err != nil || !ran {
				t.Fatalf("Run: %v, the role ran: %v", err, ran)
			}
			leases, err := client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, lease := range leases.Items {
				got = append(got, lease.Namespace+"/"+lease.Name)
			}
			if diff := cmp.Diff([]string{tc.want + "/lease"}, got); diff != "" {
				t.Errorf("Leases (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestLeaderElectionFlags: the flags' names and defaults, which the
// manifests and the charts rely on, and that they set the fields.
func TestLeaderElectionFlags(t *testing.T) {
	var l LeaderElection
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	l.AddFlags(fs, "my-controller")
	defaults := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { defaults[f.Name] = f.DefValue })
	want := map[string]string{
		"leader-elect":                    "true",
		"leader-elect-resource-namespace": "",
		"leader-elect-resource-name":      "my-controller",
		"leader-elect-lease-duration":     "15s",
		"leader-elect-renew-deadline":     "10s",
		"leader-elect-retry-period":       "2s",
	}
	if diff := cmp.Diff(want, defaults); diff != "" {
		t.Errorf("flag defaults (-want, +got):\n%s", diff)
	}
	if err := l.Check(); err != nil {
		t.Errorf("Check of the defaults: %v", err)
	}
	err := fs.Parse([]string{"--leader-elect=false", "--leader-elect-resource-namespace=ns", "--leader-elect-resource-name=n",
		"--leader-elect-lease-duration=1m", "--leader-elect-renew-deadline=30s", "--leader-elect-retry-period=5s"})
	if err != nil {
		t.Fatal(err)
	}
	wantParsed := LeaderElection{Namespace: "ns", Name: "n", LeaseDuration: time.Minute, RenewDeadline: 30 * time.Second, RetryPeriod: 5 * time.Second}
	if diff := cmp.Diff(wantParsed, l); diff != "" {
		t.Errorf("parsed (-want, +got):\n%s", diff)
	}
}

// TestLeaderElectionCheck: durations client-go's elector would panic on
// are refused, by the flags' names.
func TestLeaderElectionCheck(t *testing.T) {
	for _, tc := range []struct {
		name                string
		lease, renew, retry time.Duration
		want                string
	}{
		{name: "defaults", lease: 15 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second},
		{name: "no retry period", lease: 15 * time.Second, renew: 10 * time.Second,
			want: "--leader-elect-retry-period (0s) must be positive"},
		{name: "lease shorter than the renew deadline", lease: time.Second, renew: 2 * time.Second, retry: time.Second / 2,
			want: "--leader-elect-lease-duration (1s) must be longer than --leader-elect-renew-deadline (2s)"},
		{name: "lease as long as the renew deadline", lease: 2 * time.Second, renew: 2 * time.Second, retry: time.Second / 2,
			want: "--leader-elect-lease-duration (2s) must be longer than --leader-elect-renew-deadline (2s)"},
		{name: "renew deadline within the retry period", lease: 15 * time.Second, renew: 2 * time.Second, retry: 2 * time.Second,
			want: "--leader-elect-renew-deadline (2s) must be longer than 1.2 times --leader-elect-retry-period (2s)"},
		{name: "renew deadline just past the jitter", lease: 15 * time.Second, renew: 2500 * time.Millisecond, retry: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := LeaderElection{Enabled: true, LeaseDuration: tc.lease, RenewDeadline: tc.renew, RetryPeriod: tc.retry}
			if err := l.Check(); fmt.Sprint(err) != tc.want && (tc.want != "" || err != nil) {
				t.Errorf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}
