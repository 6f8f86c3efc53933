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

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/seatcheck"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// httpLicenseServer is the JSON endpoint of the http source, served by the
// test: per feature, seats issued and in use; or an HTTP error status.
type httpLicenseServer struct {
	srv *httptest.Server

	mu     sync.Mutex
	total  map[string]int
	inUse  map[string]int
	status int // 0: 200 with the document
	errors int // responses with status
	reads  []time.Time
}

func (tc *testContext) newHTTPLicenseServer(totals map[string]int) *httpLicenseServer {
	s := &httpLicenseServer{total: totals, inUse: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tc.t.Cleanup(s.srv.Close)
	return s
}

type httpFeature struct {
	Name  string `json:"name"`
	Total int    `json:"total"`
	InUse int    `json:"inUse"`
}

func (s *httpLicenseServer) serve(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	if len(s.reads) < 1000 {
		s.reads = append(s.reads, time.Now())
	}
	status := s.status
	doc := struct {
		Features []httpFeature `json:"features"`
	}{Features: []httpFeature{}}
	for name, total := range s.total {
		doc.Features = append(doc.Features, httpFeature{Name: name, Total: total, InUse: s.inUse[name]})
	}
	s.mu.Unlock()
	if status != 0 {
		s.mu.Lock()
		s.errors++
		s.mu.Unlock()
		http.Error(w, "license server unavailable", status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

func (s *httpLicenseServer) setInUse(feature string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inUse[feature] = n
}

func (s *httpLicenseServer) setTotal(feature string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total[feature] = n
}

// readAfter returns when the server was first read after t.
func (s *httpLicenseServer) readAfter(t time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reads {
		if r.After(t) {
			return r, true
		}
	}
	return time.Time{}, false
}

// truth is what the server has of each feature's pool, for seatcheck:
// every seat in use is checked out outside the cluster (the test's pods
// never check out).
func (s *httpLicenseServer) truth(features map[string]config.Feature) map[string]seatcheck.Truth {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]seatcheck.Truth{}
	for name, f := range features {
		out[f.Pool] = seatcheck.Truth{Total: s.total[name], External: s.inUse[name]}
	}
	return out
}

// failed returns how many error responses the server sent.
func (s *httpLicenseServer) failed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errors
}

func (s *httpLicenseServer) setStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// binaryLicenseConfig writes a driver configuration for features named
// after the test, read from server every second, with seats published as
// devices says ("": the default), and returns its path.
// The ResourceSlices and DeviceClasses of its pools are deleted when the
// test ends (after its processes stopped: cleanups run last-in first-out),
// so that no pool of this test outlives it.
func (tc *testContext) binaryLicenseConfig(server *httpLicenseServer, devices config.Devices, features ...string) (string, map[string]config.Feature) {
	tc.t.Helper()
	c, byName := tc.licenseConfigFor(devices, features...)
	c.Source.HTTP.URL = server.srv.URL + "/features"
	data, err := yaml.Marshal(c)
	if err != nil {
		tc.t.Fatal(err)
	}
	if _, err := config.Decode(data); err != nil {
		tc.t.Fatalf("the test's driver configuration does not load: %v\n%s", err, data)
	}
	tc.t.Cleanup(func() { deletePools(tc, c.Features) })
	return tc.writeFile("license-driver.yaml", string(data)), byName
}

func deletePools(tc *testContext, features []config.Feature) {
	ctx := context.Background()
	pools := map[string]bool{}
	for _, f := range features {
		pools[f.Pool] = true
		if err := adminClient.ResourceV1().DeviceClasses().Delete(ctx, f.DeviceClassName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting DeviceClass %s: %v", f.DeviceClassName, err)
		}
	}
	list, err := adminClient.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.driver=" + licensedriver.DriverName})
	if err != nil {
		tc.t.Errorf("listing the driver's ResourceSlices: %v", err)
		return
	}
	for _, s := range list.Items {
		if !pools[s.Spec.Pool.Name] {
			continue
		}
		if err := adminClient.ResourceV1().ResourceSlices().Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			tc.t.Errorf("deleting ResourceSlice %s: %v", s.Name, err)
		}
	}
}

// licenseDriverBinary returns the binary under test: LICENSE_DRIVER_BINARY,
// or bin/license-driver, which make build builds.
func (tc *testContext) licenseDriverBinary() string {
	tc.t.Helper()
	path := os.Getenv("LICENSE_DRIVER_BINARY")
	if path == "" {
		path, _ = filepath.Abs("../../bin/license-driver")
	}
	if _, err := os.Stat(path); err != nil {
		tc.t.Fatalf("this test runs the license driver's binary: build it with make build (or set LICENSE_DRIVER_BINARY): %v", err)
	}
	return path
}

// driverProcess is `license-driver controller` run as a child process.
type driverProcess struct {
	*framework.Process
	metricsURL string
}

// runLicenseDriverController starts `license-driver controller` on the test
// cluster with configPath and extra flags, its /metrics on a free port. It
// is stopped (SIGTERM) when the test ends, and its output logged if the
// test failed.
func (tc *testContext) runLicenseDriverController(name, configPath string, extra ...string) *driverProcess {
	tc.t.Helper()
	port, err := freePort()
	if err != nil {
		tc.t.Fatal(err)
	}
	address := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{"controller", "--config=" + configPath, "--kubeconfig=" + adminKubeconfig,
		"--http-address=" + address, "--v=2"}, extra...)
	p := tc.startProcess(name, tc.licenseDriverBinary(), args...)
	return &driverProcess{Process: p, metricsURL: "http://" + address + "/metrics"}
}

// waitLog waits until p's output holds s.
func (tc *testContext) waitLog(p *driverProcess, s string) {
	tc.t.Helper()
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(context.Context) (bool, error) {
		if strings.Contains(p.Output(), s) {
			return true, nil
		}
		if p.Exited() {
			return false, fmt.Errorf("%s exited", p.Name)
		}
		return false, nil
	})
	if err != nil {
		tc.t.Fatalf("waiting for %q in the output of %s: %v", s, p.Name, err)
	}
}

// scrape returns the process's /metrics.
func (p *driverProcess) scrape(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.metricsURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", p.metricsURL, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// metricValue returns the value of one series in a Prometheus text
// exposition, named as the exposition writes it (labels sorted by name),
// e.g. license_driver_seats{pool="p",state="free"}; -1 when it is absent.
func metricValue(exposition, series string) float64 {
	for _, line := range strings.Split(exposition, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				return -1
			}
			return v
		}
	}
	return -1
}

func seatsSeries(pool, state string) string {
	return fmt.Sprintf("license_driver_seats{pool=%q,state=%q}", pool, state)
}

// waitMetrics scrapes p until every series has its value and returns the
// last exposition.
func (tc *testContext) waitMetrics(p *driverProcess, want map[string]float64) string {
	tc.t.Helper()
	var body string
	var wrong []string
	err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if body, err = p.scrape(ctx); err != nil {
			wrong = []string{err.Error()}
			return false, nil
		}
		wrong = nil
		for series, v := range want {
			if got := metricValue(body, series); got != v {
				wrong = append(wrong, fmt.Sprintf("%s is %v, want %v", series, got, v))
			}
		}
		return len(wrong) == 0, nil
	})
	if err != nil {
		tc.t.Fatalf("metrics of %s: %v: %v", p.Name, wrong, err)
	}
	return body
}

// sliceWatch follows the driver's ResourceSlices with an informer and
// records when a pool's published free seats (publishedSeats, whichever way
// the seats are published) change.
type sliceWatch struct {
	pool string
	ctx  context.Context

	mu      sync.Mutex
	changes []freeAt
	changed chan struct{} // closed and replaced at every change
}

type freeAt struct {
	at   time.Time
	free int
}

func (tc *testContext) watchSlices(pool string) *sliceWatch {
	tc.t.Helper()
	ctx, cancel := context.WithCancel(tc.ctx)
	w := &sliceWatch{pool: pool, ctx: ctx, changed: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(adminClient, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.driver=" + licensedriver.DriverName
	}))
	informer := factory.Resource().V1().ResourceSlices().Informer()
	update := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if s, ok := obj.(*resourceapi.ResourceSlice); ok && s.Spec.Pool.Name == pool {
			w.record(time.Now())
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: update,
	}); err != nil {
		tc.t.Fatal(err)
	}
	factory.Start(ctx.Done())
	tc.t.Cleanup(func() { cancel(); factory.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		tc.t.Fatal("ResourceSlice informer did not sync")
	}
	return w
}

// record counts the pool's free seats after a slice event at at. The count
// lists the API server's current state: a pool changes once a poll
// interval here, so it is the state the event announced.
func (w *sliceWatch) record(at time.Time) {
	free, _, err := publishedSeats(w.ctx, w.pool)
	if err != nil {
		return // the test is ending
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.changes); n > 0 && w.changes[n-1].free == free {
		return
	}
	w.changes = append(w.changes, freeAt{at: at, free: free})
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitFree waits until the pool publishes free seats, as seen after since,
// and returns when the informer saw it.
func (tc *testContext) waitFree(w *sliceWatch, free int, since time.Time) time.Time {
	tc.t.Helper()
	timeout := time.After(waitTimeout)
	for {
		w.mu.Lock()
		last := -1
		if n := len(w.changes); n > 0 {
			last = w.changes[n-1].free
			if c := w.changes[n-1]; c.free == free {
				w.mu.Unlock()
				if c.at.Before(since) {
					return since
				}
				return c.at
			}
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			tc.t.Fatalf("pool %s: waiting for %d free seats, %d published", w.pool, free, last)
		case <-tc.ctx.Done():
			tc.t.Fatal(tc.ctx.Err())
		}
	}
}
