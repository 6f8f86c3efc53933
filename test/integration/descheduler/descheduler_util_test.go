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

package descheduler

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// interval is the descheduler's: short, so that a test sees several
// cycles within seconds.
const interval = 2 * time.Second

// descheduler is one run of bin/descheduler with a policy.
type descheduler struct {
	tc      *testContext
	proc    *framework.Process
	metrics string
	http    *http.Client
	// seen is the counts observe reported up to, from the start: the
	// first cycle may be evicting before the metrics serve.
	seen counts
}

// startDescheduler writes policy (a DeschedulerPolicy as Go maps) and runs
// the descheduler binary on it every interval until stop or the test's
// end. It waits until the descheduler serves its metrics.
func (tc *testContext) startDescheduler(policy map[string]any) *descheduler {
	tc.t.Helper()
	bin := binary(tc.t, "DESCHEDULER_BINARY", "descheduler", "descheduler")
	data, err := yaml.Marshal(policy)
	if err != nil {
		tc.t.Fatal(err)
	}
	dir := tc.t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tc.t.Fatal(err)
	}
	port := freePort(tc)
	cmd := exec.Command(bin,
		"--policy-config-file="+path,
		"--descheduling-interval="+interval.String(),
		"--kubeconfig="+cluster.KubeconfigPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port), "--cert-dir="+dir,
		"--v=3")
	proc, err := framework.StartProcess(tc.t, "the descheduler", cmd)
	if err != nil {
		tc.t.Fatalf("starting %s: %v", bin, err)
	}
	d := &descheduler{
		tc: tc, proc: proc,
		metrics: fmt.Sprintf("https://127.0.0.1:%d/metrics", port),
		// Its serving certificate is self-signed.
		http: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local test server
		}},
	}
	tc.poll("the descheduler's metrics", func(context.Context) (bool, error) {
		_, err := d.scrape()
		if err != nil && proc.Exited() {
			if strings.Contains(proc.Output(), "PolicyEvictor in pluginConfig not registered") {
				err = fmt.Errorf("%s lacks our PolicyEvictor plugin: rebuild it with `make descheduler`: %w", bin, err)
			}
			return false, err
		}
		return err == nil, nil
	})
	tc.t.Logf("policy:\n%s", data)
	return d
}

// freePort returns a port nothing listens on now.
func freePort(tc *testContext) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tc.t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// counts is what the descheduler reports in its metrics.
type counts struct {
	// cycles is descheduler_loop_duration_seconds_count.
	cycles int
	// evicted is descheduler_pods_evicted_total{result="success"}.
	evicted int
	// refused is PolicyEvictor's adminsched_policyevictor_refused_total,
	// all reasons.
	refused int
}

// scrape reads the descheduler's metrics.
func (d *descheduler) scrape() (counts, error) {
	if d.proc.Exited() {
		return counts{}, fmt.Errorf("the descheduler exited (%v); its output is logged below", d.proc.ProcessState())
	}
	resp, err := d.http.Get(d.metrics)
	if err != nil {
		return counts{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return counts{}, fmt.Errorf("GET %s: %s", d.metrics, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return counts{}, err
	}
	var c counts
	for _, m := range families["descheduler_loop_duration_seconds"].GetMetric() {
		c.cycles += int(m.GetHistogram().GetSampleCount())
	}
	for _, m := range families["descheduler_pods_evicted_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "result" && l.GetValue() == "success" {
				c.evicted += int(m.GetCounter().GetValue())
			}
		}
	}
	for _, m := range families["adminsched_policyevictor_refused_total"].GetMetric() {
		c.refused += int(m.GetCounter().GetValue())
	}
	return c, nil
}

// observe waits for the descheduler's next n cycles to end and returns
// how many pods each one evicted, by its metrics.
func (d *descheduler) observe(n int) []int {
	d.tc.t.Helper()
	perCycle := make([]int, 0, n)
	last := &d.seen
	timeout := time.Duration(n+3) * 4 * interval
	err := wait.PollUntilContextTimeout(d.tc.ctx, 200*time.Millisecond, timeout, false, func(context.Context) (bool, error) {
		c, err := d.scrape()
		if err != nil {
			return false, err
		}
		for ; last.cycles < c.cycles && len(perCycle) < n; last.cycles++ {
			perCycle = append(perCycle, c.evicted-last.evicted)
			last.evicted = c.evicted
		}
		return len(perCycle) == n, nil
	})
	if err != nil {
		d.tc.t.Fatalf("waiting for %d cycles of the descheduler (saw %d): %v", n, len(perCycle), err)
	}
	return perCycle
}

// stop ends the descheduler before the test does.
func (d *descheduler) stop() { d.proc.Stop() }

// eviction is one pod the eviction API evicted.
type eviction struct {
	name, node string
}

// evictionWatch records the pods of the test's namespace the eviction API
// evicted (it sets the DisruptionTarget condition before deleting them),
// by UID.
type evictionWatch struct {
	mu      sync.Mutex
	evicted map[types.UID]eviction
}

// watchEvictions starts recording the evictions in the test's namespace.
func (tc *testContext) watchEvictions() *evictionWatch {
	tc.t.Helper()
	w := &evictionWatch{evicted: map[types.UID]eviction{}}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(tc.ns))
	informer := factory.Core().V1().Pods().Informer()
	record := func(obj any) {
		if pod, ok := obj.(*v1.Pod); ok && evictedByAPI(pod) {
			w.mu.Lock()
			w.evicted[pod.UID] = eviction{name: pod.Name, node: pod.Spec.NodeName}
			w.mu.Unlock()
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { record(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			record(obj)
		},
	}); err != nil {
		tc.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tc.ctx)
	tc.t.Cleanup(cancel)
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		tc.t.Fatal("the pod informer did not sync")
	}
	return w
}

func evictedByAPI(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" {
			return true
		}
	}
	return false
}

// pods returns the evicted pods so far, by UID.
func (w *evictionWatch) pods() map[types.UID]eviction {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.evicted)
}

// poll runs cond until it holds, failing the test after waitTimeout.
func (tc *testContext) poll(what string, cond func(ctx context.Context) (bool, error)) {
	tc.t.Helper()
	if err := wait.PollUntilContextTimeout(tc.ctx, pollInterval, waitTimeout, true, cond); err != nil {
		tc.t.Fatalf("waiting for %s: %v", what, err)
	}
}
