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
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/klog/v2/ktesting"
)

// fakeReviews answers TokenReviews and SubjectAccessReviews as the API
// server would with these tokens and this RBAC: "reader-token" is
// prometheus, who may GET /metrics; "other-token" is someone-else, who may
// not; any other token is not authenticated. It counts the reviews.
func fakeReviews(t *testing.T) (kubeconfig string, reviews *atomic.Int32) {
	t.Helper()
	reviews = &atomic.Int32{}
	users := map[string]string{"reader-token": "prometheus", "other-token": "someone-else"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reviews.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var review authenticationv1.TokenReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if user, ok := users[review.Spec.Token]; ok {
				review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: user}}
			}
			_ = json.NewEncoder(w).Encode(review)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			var review authorizationv1.SubjectAccessReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			a := review.Spec.NonResourceAttributes
			review.Status.Allowed = review.Spec.User == "prometheus" && a != nil && a.Path == "/metrics" && a.Verb == "get"
			_ = json.NewEncoder(w).Encode(review)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return writeKubeconfig(t, srv.URL), reviews
}

// tlsClient trusts the self-signed serving certificate.
func tlsClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed in memory
	}}
}

// TestSecureServing scrapes the controller's secure port as Prometheus and
// others would: without a token (system:anonymous) and with a token RBAC
// does not let GET /metrics, refused; with a bad token, unauthenticated;
// with the reader's token, the metrics. /healthz answers without a token,
// for the kubelet's probes. The reviews go to --kubeconfig's server.
func TestSecureServing(t *testing.T) {
	kubeconfig, reviews := fakeReviews(t)
	s := NewSecureServing("my-controller")
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	s.AddFlags(fs)
	if err := fs.Parse([]string{"--bind-address=127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.serving.Listener = l
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	stopped, err := s.Start(ctx, kubeconfig)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	client := tlsClient()
	for _, tc := range []struct {
		name, path, token string
		code              int
		body              string
	}{
		{"no token", "/metrics", "", http.StatusForbidden, `User \"system:anonymous\" cannot get path \"/metrics\"`},
		{"a token RBAC does not let scrape", "/metrics", "other-token", http.StatusForbidden, `User \"someone-else\" cannot get path \"/metrics\"`},
		{"a bad token", "/metrics", "stolen", http.StatusUnauthorized, "Unauthorized"},
		{"the reader's token", "/metrics", "reader-token", http.StatusOK, "controllerrun_test_scrapes_total 1"},
		{"probe", "/healthz", "", http.StatusOK, "ok"},
		{"probe /readyz", "/readyz", "", http.StatusOK, "ok"},
		{"another path", "/debug/pprof/", "reader-token", http.StatusForbidden, `cannot get path \"/debug/pprof/\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, err := get(ctx, client, "https://"+l.Addr().String()+tc.path, tc.token)
			if err != nil {
				t.Fatalf("GET %s: %v", tc.path, err)
			}
			if code != tc.code || !strings.Contains(body, tc.body) {
				t.Errorf("GET %s: %d %q, want %d and %q", tc.path, code, body[:min(len(body), 300)], tc.code, tc.body)
			}
		})
	}
	if reviews.Load() == 0 {
		t.Errorf("no TokenReview or SubjectAccessReview reached --kubeconfig's server")
	}
	cancel()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the secure server did not stop within 30s of cancel")
	}
}

// TestSecureServingNeedsCredentials: without credentials for the reviews
// the secure port does not start, rather than treat every caller as
// anonymous.
func TestSecureServingNeedsCredentials(t *testing.T) {
	s := NewSecureServing("my-controller")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.serving.Listener = l
	_, ctx := ktesting.NewTestContext(t)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err = s.Start(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "--authentication-kubeconfig") {
		t.Errorf("start without a kubeconfig, out of a cluster: %v, want an error naming --authentication-kubeconfig", err)
	}
}

// TestWithSecureServing: off without --secure-port; with it, the command
// runs with the server up, its reviews sent to the command's --kubeconfig,
// and the server has stopped once the command returns.
func TestWithSecureServing(t *testing.T) {
	kubeconfig, _ := fakeReviews(t)
	addr := freeAddress(t)
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	client := tlsClient()
	for _, tc := range []struct {
		name    string
		args    []string
		serving bool
	}{
		{name: "off by default", args: []string{"--kubeconfig=" + kubeconfig}},
		{name: "--secure-port", args: []string{"--kubeconfig=" + kubeconfig, "--bind-address=127.0.0.1", "--secure-port=" + port}, serving: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			scrape := func(ctx context.Context) (int, error) {
				code, _, err := get(ctx, client, "https://"+addr+"/metrics", "reader-token")
				return code, err
			}
			ran := false
			cmd := &cobra.Command{Use: "controller", RunE: func(c *cobra.Command, _ []string) error {
				ran = true
				code, err := scrape(c.Context())
				if served := err == nil && code == http.StatusOK; served != tc.serving {
					t.Errorf("while running, GET /metrics as the reader: %d %v; want served: %v", code, err, tc.serving)
				}
				return nil
			}}
			cmd.Flags().String("kubeconfig", "", "")
			cmd.SetArgs(tc.args)
			if err := WithSecureServing(cmd, "my-controller").ExecuteContext(ctx); err != nil || !ran {
				t.Fatalf("Execute: %v; ran: %v", err, ran)
			}
			if code, err := scrape(ctx); err == nil {
				t.Errorf("after the return, GET /metrics: %d, want no server", code)
			}
		})
	}
}
