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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/controller"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/source"
)

// scrape is what /metrics serves (controllerrun.ServeHTTP and the secure
// port serve the legacy registry).
func scrape() string {
	rec := httptest.NewRecorder()
	legacyregistry.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestControllerMetrics: /metrics serves the controller's license_driver_*
// metrics with what a running controller set (here on a fake clientset and
// a static source).
func TestControllerMetrics(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	controller.RegisterMetrics()

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
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		body := scrape()
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
}
