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
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
)

// TestControllerRun: a leader election flag error comes before any
// cluster error and before anything starts; without leader election, the
// body runs once with the kubeconfig's client, after the metrics are
// registered and /healthz answers, and its error is Run's unless ctx has
// ended. The leader's side needs Leases: the integration tests run it.
func TestControllerRun(t *testing.T) {
	api := httptest.NewServer(http.NotFoundHandler())
	defer api.Close()
	kubeconfig := writeKubeconfig(t, api.URL)
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	failed := errors.New("the controller failed")
	badElection := LeaderElection{Enabled: true, LeaseDuration: time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: time.Second / 2}
	for _, tc := range []struct {
		name       string
		kubeconfig string
		election   LeaderElection
		// stopped: ctx ends before the body returns its error.
		stopped bool
		bodyErr error
		// want is in Run's error; empty: no error.
		want string
		// ran: the body ran, and the metrics were registered before.
		ran bool
	}{
		{name: "leader election flags before the kubeconfig", kubeconfig: missing, election: badElection,
			want: "--leader-elect-lease-duration (1s) must be longer than --leader-elect-renew-deadline (2s)"},
		{name: "a missing kubeconfig", kubeconfig: missing, want: "kubeconfig: "},
		{name: "without leader election, its flags unchecked", kubeconfig: kubeconfig,
			election: LeaderElection{LeaseDuration: time.Second, RenewDeadline: 2 * time.Second}, ran: true},
		{name: "the body fails", kubeconfig: kubeconfig, bodyErr: failed, want: failed.Error(), ran: true},
		{name: "stopped while starting", kubeconfig: kubeconfig, stopped: true, bodyErr: fmt.Errorf("sync informer: %w", context.Canceled), ran: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			addr := freeAddress(t)
			registered, ran := 0, 0
			c := Controller{
				Name:            "my-controller",
				Kubeconfig:      tc.kubeconfig,
				LeaderElection:  tc.election,
				HTTPAddress:     addr,
				RegisterMetrics: func() { registered++ },
				Leading:         "Leading: testing",
			}
			err := c.Run(ctx, func(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, recorder record.EventRecorder) error {
				ran++
				if registered != 1 {
					t.Errorf("the body runs with the metrics registered %d times, want 1", registered)
				}
				if restConfig.Host != api.URL || restConfig.UserAgent != "my-controller" || client == nil || recorder == nil {
					t.Errorf("the body's client: host %q, user agent %q, nil client %t, nil recorder %t; want the kubeconfig's server and the name", restConfig.Host, restConfig.UserAgent, client == nil, recorder == nil)
				}
				if code, body, err := get(ctx, http.DefaultClient, "http://"+addr+"/healthz", ""); err != nil || code != http.StatusOK || body != "ok" {
					t.Errorf("GET /healthz while the body runs: %d %q %v, want 200 \"ok\"", code, body, err)
				}
				if tc.stopped {
					cancel()
				}
				return tc.bodyErr
			})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Run: %v, want %q", err, tc.want)
			}
			want := 0
			if tc.ran {
				want = 1
			}
			if ran != want || registered != want {
				t.Errorf("the body ran %d times, the metrics were registered %d times; want %d", ran, registered, want)
			}
		})
	}
}
