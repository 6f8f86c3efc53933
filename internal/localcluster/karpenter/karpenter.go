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

// Package karpenter runs a real Karpenter (v1.15.0 with its KWOK cloud
// provider, built by hack/install-karpenter.sh) on a running
// localcluster.ControlPlane: real provisioning and consolidation, whose
// "instances" are Node objects the provider creates and the cluster's KWOK
// keeps Ready (KWOK manages every node, see localcluster's kwok.yaml).
//
// Start installs the CRDs, writes our instance types (InstanceTypes in
// Regions, spot and on-demand) and starts bin/karpenter; CreateNodeClass and
// CreateNodePool make what Karpenter provisions from. Karpenter adds a node
// for every pending pod it can fit, so it must never run in a cluster that
// other tests share.
package karpenter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

const (
	// Binary is Karpenter's program in the assets directory.
	Binary = "karpenter"
	// CRDDir is the directory of the assets that holds Karpenter's CRDs.
	CRDDir = "karpenter-crds"
	// InstanceTypesFile is the instance-types file Start writes in the log
	// directory.
	InstanceTypesFile = "karpenter-instance-types.json"

	readyTimeout = 2 * time.Minute
	stopGrace    = 10 * time.Second
)

// CRDs are the files of CRDDir that Start installs: without the first three
// Karpenter's default controllers do not start; the others are watched only
// with their feature gates.
var CRDs = []string{
	"karpenter.sh_nodepools.yaml",
	"karpenter.sh_nodeclaims.yaml",
	"karpenter.kwok.sh_kwoknodeclasses.yaml",
	"karpenter.sh_nodeoverlays.yaml",
	"autoscaling.x-k8s.io_capacitybuffers.yaml",
}

// CheckAssets checks that assets holds bin/karpenter and its CRDs, and
// says how to build them otherwise.
func CheckAssets(assets string) error {
	var missing []string
	bin := filepath.Join(assets, Binary)
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		missing = append(missing, bin)
	}
	for _, crd := range CRDs {
		path := filepath.Join(assets, CRDDir, crd)
		if _, err := os.Stat(path); err != nil {
			missing = append(missing, path)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not found (or not executable): %s: build Karpenter with `make karpenter`, or point KUBEBUILDER_ASSETS at a directory holding %s and %s/",
			strings.Join(missing, ", "), Binary, CRDDir)
	}
	return nil
}

// Option changes how Start runs Karpenter.
type Option func(*options)

type options struct {
	env map[string]string
}

// WithEnv sets one of Karpenter's environment variables (its flags'
// fallbacks, see sigs.k8s.io/karpenter/pkg/operator/options), after
// Start's own: FEATURE_GATES, LOG_LEVEL=debug, BATCH_MAX_DURATION...
func WithEnv(name, value string) Option {
	return func(o *options) { o.env[name] = value }
}

// Karpenter is a running bin/karpenter.
type Karpenter struct {
	// Client reaches Karpenter's objects (NodePoolGVR, NodeClaimGVR,
	// NodeClassGVR) as the cluster's admin.
	Client dynamic.Interface
	// InstanceTypesPath is the instance-types file Karpenter reads.
	InstanceTypesPath string
	// MetricsURL is Karpenter's Prometheus endpoint (see Metric).
	MetricsURL string

	proc *localcluster.Process
}

// Start installs Karpenter's CRDs from assets/CRDDir on cp, writes
// InstanceTypes to logDir/InstanceTypesFile, and runs assets/Binary with
// its log in logDir/karpenter.log, as a program of cp (cp.Stop stops it
// first). It returns once Karpenter reports ready (its caches synced and
// its CRDs served).
func Start(ctx context.Context, cp *localcluster.ControlPlane, assets, logDir string, opts ...Option) (*Karpenter, error) {
	logger := klog.FromContext(ctx)
	if err := CheckAssets(assets); err != nil {
		return nil, err
	}
	o := options{env: map[string]string{}}
	for _, opt := range opts {
		opt(&o)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
		Paths:              crdPaths(assets),
		ErrorIfPathMissing: true,
	}); err != nil {
		return nil, fmt.Errorf("installing Karpenter's CRDs from %s: %w", filepath.Join(assets, CRDDir), err)
	}
	client, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	data, err := InstanceTypesJSON(InstanceTypes, Regions)
	if err != nil {
		return nil, err
	}
	k := &Karpenter{Client: client, InstanceTypesPath: filepath.Join(logDir, InstanceTypesFile)}
	if err := os.WriteFile(k.InstanceTypesPath, data, 0o600); err != nil {
		return nil, err
	}
	healthPort, err := freePort()
	if err != nil {
		return nil, err
	}
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	k.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	env := map[string]string{
		// Karpenter parses its own flag set, which has no --kubeconfig:
		// controller-runtime's config loader reads KUBECONFIG.
		"KUBECONFIG":               cp.KubeconfigPath,
		"DISABLE_LEADER_ELECTION":  "true",
		"INSTANCE_TYPES_FILE_PATH": k.InstanceTypesPath,
		// Start waits for /readyz; tests read the metrics to know that
		// Karpenter looked again (provisioning passes, say).
		"HEALTH_PROBE_PORT": strconv.Itoa(healthPort),
		"METRICS_PORT":      strconv.Itoa(metricsPort),
		// The batching window gathers pending pods before one provisioning
		// decision: 10 s at most and 1 s idle by default. Tests create
		// their pods at once, so a short window only makes them quicker.
		"BATCH_MAX_DURATION":  "2s",
		"BATCH_IDLE_DURATION": "200ms",
		// A controller alone in its cluster: no reason to hold back.
		"KUBE_CLIENT_QPS":   "500",
		"KUBE_CLIENT_BURST": "1000",
	}
	for name, value := range o.env {
		env[name] = value
	}
	var envList []string
	for name, value := range env {
		envList = append(envList, name+"="+value)
	}
	proc, err := cp.StartProcess(logDir, Binary, filepath.Join(assets, Binary), envList)
	if err != nil {
		return nil, fmt.Errorf("%w\nbuild Karpenter with `make karpenter`", err)
	}
	k.proc = proc
	start := time.Now()
	if err := waitReady(ctx, proc, healthPort); err != nil {
		_ = proc.Stop(stopGrace)
		return nil, err
	}
	logger.V(2).Info("Karpenter is ready", "duration", time.Since(start), "log", proc.Log())
	return k, nil
}

func crdPaths(assets string) []string {
	paths := make([]string, 0, len(CRDs))
	for _, crd := range CRDs {
		paths = append(paths, filepath.Join(assets, CRDDir, crd))
	}
	return paths
}

// waitReady polls Karpenter's /readyz until it answers 200, or fails with
// the end of its log when it exits.
func waitReady(ctx context.Context, proc *localcluster.Process, port int) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	httpClient := &http.Client{Timeout: 2 * time.Second}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, readyTimeout, true, func(ctx context.Context) (bool, error) {
		if err := proc.Err(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			last = err
			return false, nil
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("%s answered %s", url, resp.Status)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		if exit := proc.Err(); exit != nil {
			return fmt.Errorf("karpenter did not start: %w", exit)
		}
		return fmt.Errorf("karpenter was not ready within %s (last: %v); see %s: %w", readyTimeout, last, proc.Log(), err)
	}
	return nil
}

// ProvisioningPasses is the series that counts Karpenter's provisioning
// passes (its scheduling simulations for pending pods): it runs one when
// pods become pending and then every 10 s while any is.
const ProvisioningPasses = `karpenter_scheduler_scheduling_duration_seconds_count{controller="provisioner"}`

// EmptinessEvaluations counts the times Karpenter's disruption loop (every
// 10 s when it has nothing to do) looked for empty nodes to remove, and
// EmptyCandidates is how many it found the last time: a consolidatable
// empty node is not one while a pending pod is nominated to it.
const (
	EmptinessEvaluations = `karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count{consolidation_type="empty",reason="empty"}`
	EmptyCandidates      = `karpenter_voluntary_disruption_eligible_nodes{reason="empty"}`
)

// Metric reads Karpenter's metrics and returns the value of series, a
// metric name with its labels as Prometheus writes them
// (ProvisioningPasses, say); a series not (yet) reported is 0.
func (k *Karpenter) Metric(ctx context.Context, series string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.MetricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, fmt.Errorf("reading Karpenter's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("reading Karpenter's metrics: %s answered %s", k.MetricsURL, resp.Status)
	}
	// Karpenter's registry is small (about 100 KB): read it whole, but
	// never more than a few MB.
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, fmt.Errorf("reading Karpenter's metrics: %w", err)
	}
	return metricValue(string(body), series)
}

// metricValue finds series in Prometheus text exposition.
func metricValue(text, series string) (float64, error) {
	for line := range strings.Lines(text) {
		value, ok := strings.CutPrefix(strings.TrimSpace(line), series)
		if !ok || (value != "" && value[0] != ' ') {
			continue // another series, or a longer name
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return 0, fmt.Errorf("metric %s: no value", series)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("metric %s: %q is not a number", series, fields[0])
		}
		return v, nil
	}
	return 0, nil
}

// Err is nil while Karpenter runs (or after Stop), and otherwise says how it
// exited, with the end of its log: a test waiting for nodes checks it.
func (k *Karpenter) Err() error {
	return k.proc.Err()
}

// Log is the path of Karpenter's log file.
func (k *Karpenter) Log() string {
	return k.proc.Log()
}

// Stop stops Karpenter (SIGTERM, then SIGKILL after 10 s). The nodes and
// NodeClaims it made stay.
func (k *Karpenter) Stop() error {
	return k.proc.Stop(stopGrace)
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("not a TCP address: " + l.Addr().String())
	}
	return addr.Port, nil
}
