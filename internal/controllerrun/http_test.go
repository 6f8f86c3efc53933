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
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2/ktesting"
)

// testCounter is a metric of the legacy registry, which both servers serve.
var testCounter = metrics.NewCounter(&metrics.CounterOpts{Name: "controllerrun_test_scrapes_total", Help: "A metric the tests scrape.", StabilityLevel: metrics.ALPHA})

func init() {
	legacyregistry.MustRegister(testCounter)
	testCounter.Inc()
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func get(ctx context.Context, client *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestServeHTTP: /healthz answers, /metrics serves the legacy registry, a
// second server on the address fails naming the flag, and the server stops
// with its context.
func TestServeHTTP(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	addr := freeAddress(t)
	if err := ServeHTTP(ctx, addr); err != nil {
		t.Fatal(err)
	}
	code, body, err := get(ctx, http.DefaultClient, "http://"+addr+"/healthz", "")
	if err != nil || code != http.StatusOK || body != "ok" {
		t.Errorf("GET /healthz: %d %q %v, want 200 \"ok\"", code, body, err)
	}
	code, body, err = get(ctx, http.DefaultClient, "http://"+addr+"/metrics", "")
	if want := "controllerrun_test_scrapes_total 1"; err != nil || code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("GET /metrics: %d %v, want 200 and %q in:\n%s", code, err, want, body)
	}

	if err := ServeHTTP(ctx, addr); err == nil || !strings.Contains(err.Error(), "--http-address") {
		t.Errorf("a second server on %s: %v, want an error naming --http-address", addr, err)
	}

	cancel()
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := get(context.Background(), http.DefaultClient, "http://"+addr+"/healthz", "")
		return err != nil, nil
	})
	if err != nil {
		t.Errorf("the server still answers after its context ended: %v", err)
	}
}
