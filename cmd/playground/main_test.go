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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// These tests run the real thing: etcd and kube-apiserver from
// KUBEBUILDER_ASSETS (default ../../bin) and our scheduler in-process.

var assets string

func TestMain(m *testing.M) {
	assets = os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets, _ = filepath.Abs("../../bin")
	}
	if err := localcluster.CheckAssets(assets); err != nil {
		fmt.Fprintf(os.Stderr, "cmd/playground tests run a real control plane: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

const (
	shippedConfig  = "../../manifests/nodelesspods/scheduler-config.yaml"
	scenarios      = "../../examples/scenarios/"
	tutorial       = scenarios + "tutorial.yaml"
	defaultProfile = scenarios + "default-profile-config.yaml"
)

// runPlayground calls run with the test's assets and returns the exit code,
// stdout and stderr.
func runPlayground(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(context.Background(), append([]string{"--assets", assets}, args...), &stdout, &stderr)
	t.Logf("playground %s: exit %d in %v\nstderr:\n%s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), stderr.String())
	return code, stdout.String(), stderr.String()
}

func decodeResult(t *testing.T, out string) report.Result {
	t.Helper()
	var r report.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding the JSON output: %v\n%s", err, out)
	}
	return r
}

func nodeOf(r report.Result) map[string]string {
	m := map[string]string{}
	for _, p := range r.Pods {
		m[p.Name] = p.Node
	}
	return m
}

// TestTutorial is the tutorial end to end, as README.md and make demo run it:
// the shipped config on examples/scenarios/tutorial.yaml. On 3 nodes,
// test-pod-1 and test-pod-2 (each bound before the next object is created)
// land on different nodes, then the 5 replicas of the Deployment spread so
// that no two nodes differ by more than one pod, replicas alone or all pods.
// TestKeep checks the text output of the same run.
func TestTutorial(t *testing.T) {
	code, out, _ := runPlayground(t, "--config", shippedConfig, "--scenario", tutorial, "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	r := decodeResult(t, out)
	for _, p := range r.Pods {
		if p.Node == "" {
			t.Errorf("pod %s not bound: %s", p.Name, p.Reason)
		}
	}
	nodes := nodeOf(r)
	if nodes["test-pod-1"] == "" || nodes["test-pod-1"] == nodes["test-pod-2"] {
		t.Errorf("test-pod-1 on %q, test-pod-2 on %q: want two different nodes", nodes["test-pod-1"], nodes["test-pod-2"])
	}
	replicas := map[string]int{"tutorial-1": 0, "tutorial-2": 0, "tutorial-3": 0}
	n := 0
	for _, p := range r.Pods {
		if strings.HasPrefix(p.Name, "test-deployment-") {
			n++
			if _, ok := replicas[p.Node]; !ok {
				t.Errorf("replica %s on %q, want a tutorial node", p.Name, p.Node)
			}
			replicas[p.Node]++
		}
	}
	var counts []int
	for _, c := range replicas {
		counts = append(counts, c)
	}
	if n != 5 || report.Spread(counts) > 1 {
		t.Errorf("replicas per node %v (%d replicas): want 5 with a spread of at most 1", replicas, n)
	}
	if len(r.Pods) != 7 || len(r.Nodes) != 3 || r.Spread > 1 {
		t.Errorf("%d pods, nodes %v, spread %d: want 7 pods on 3 nodes, spread at most 1", len(r.Pods), r.Nodes, r.Spread)
	}
}

// decodeRuns decodes the JSON output of a --compare run.
func decodeRuns(t *testing.T, out string) []report.Run {
	t.Helper()
	var got struct {
		Runs []report.Run `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
	return got.Runs
}

// replicasPerNode counts the pods whose name starts with prefix per node.
func replicasPerNode(r report.Result, prefix string) map[string]int {
	m := map[string]int{}
	for _, p := range r.Pods {
		if strings.HasPrefix(p.Name, prefix) {
			m[p.Node]++
		}
	}
	return m
}

// TestConsolidation runs the consolidation scenario (a Deployment behind a
// Service) with the shipped consolidation profile and, side by side, with
// MostPods next to the default plugins: the first packs every replica onto
// consolidation-1, the busiest node that fits; the second spreads them.
func TestConsolidation(t *testing.T) {
	consolidationConfig := "../../manifests/nodelesspods/consolidation-config.yaml"
	mostPods := scenarios + "mostpods-config.yaml"
	code, out, _ := runPlayground(t, "--config", consolidationConfig, "--compare", mostPods,
		"--scenario", scenarios+"consolidation.yaml", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	runs := decodeRuns(t, out)
	if len(runs) != 2 || runs[0].Config != consolidationConfig || runs[1].Config != mostPods {
		t.Fatalf("runs %+v, want 2: %s then %s", runs, consolidationConfig, mostPods)
	}

	packed := runs[0].Result
	if got := replicasPerNode(packed, "web-"); fmt.Sprint(got) != fmt.Sprint(map[string]int{"consolidation-1": 6}) {
		t.Errorf("%s: replicas per node %v, want all 6 on consolidation-1 (the busiest node that fits)", consolidationConfig, got)
	}
	want := []report.NodeResult{
		{Name: "consolidation-1", Pods: 16}, {Name: "consolidation-2", Pods: 9}, {Name: "consolidation-3", Pods: 8},
		{Name: "consolidation-4", Pods: 0}, {Name: "consolidation-full", Pods: 12},
	}
	if fmt.Sprint(packed.Nodes) != fmt.Sprint(want) {
		t.Errorf("%s: nodes %v, want %v", consolidationConfig, packed.Nodes, want)
	}

	spread := replicasPerNode(runs[1].Result, "web-")
	if len(spread) < 2 || spread[""] > 0 || spread["consolidation-full"] > 0 {
		t.Errorf("%s: replicas per node %v, want them bound on 2 nodes or more (the contrast spreads), none on the full node", mostPods, spread)
	}
}

// TestWeights runs the weights scenario with NodeLessPods (LeastPods) at
// weight 1 and at the shipped weight 3: the new pod lands where
// examples/scenarios/weights.yaml says, roomy-1 (the resources decide) and
// nearly-full (the pod count decides).
func TestWeights(t *testing.T) {
	weight1 := scenarios + "leastpods-weight-1-config.yaml"
	code, out, _ := runPlayground(t, "--config", weight1, "--compare", shippedConfig,
		"--scenario", scenarios+"weights.yaml", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	runs := decodeRuns(t, out)
	if len(runs) != 2 || runs[0].Config != weight1 || runs[1].Config != shippedConfig {
		t.Fatalf("runs %+v, want 2: %s then %s", runs, weight1, shippedConfig)
	}
	for i, want := range []string{"roomy-1", "nearly-full"} {
		if got := nodeOf(runs[i].Result)["new-pod"]; got != want {
			t.Errorf("%s: new-pod on %q, want %s", runs[i].Config, got, want)
		}
	}
}

func TestCompare(t *testing.T) {
	code, out, _ := runPlayground(t, "--config", shippedConfig, "--compare", defaultProfile, "--scenario", tutorial, "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	runs := decodeRuns(t, out)
	if len(runs) != 2 || runs[0].Config != shippedConfig || runs[1].Config != defaultProfile {
		t.Fatalf("runs %+v, want 2: %s then %s", runs, shippedConfig, defaultProfile)
	}
	for i, run := range runs {
		if len(run.Result.Pods) != 7 || len(run.Result.Nodes) != 3 {
			t.Errorf("run %d: %d pods on %d nodes, want 7 on 3", i, len(run.Result.Pods), len(run.Result.Nodes))
		}
		for _, p := range run.Result.Pods {
			if p.Node == "" {
				t.Errorf("run %d: pod %s not bound: %s", i, p.Name, p.Reason)
			}
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadInput covers how the command reports what playground.Play refuses
// (its unit tests cover each check) and its own flags: an input error exits
// 2 naming the file, missing binaries exit 1, and nothing starts.
func TestBadInput(t *testing.T) {
	badMode := writeFile(t, "bad-mode.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    pluginConfig:
      - name: NodeLessPods
        args: {mode: Fewest}
`)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{name: "invalid plugin args", args: []string{"--config", badMode, "--scenario", tutorial}, wantCode: 2,
			want: []string{"playground: scheduler config " + badMode, "profiles[0].pluginConfig[0].args.mode", `Unsupported value: "Fewest"`}},
		{name: "bad output", args: []string{"--output", "yaml"}, wantCode: 2, want: []string{"--output", `"yaml"`}},
		{name: "missing binaries", args: []string{"--config", shippedConfig, "--scenario", tutorial, "--assets", t.TempDir()}, wantCode: 1,
			want: []string{"playground: not found (or not executable): ", "/etcd, ", "/kube-controller-manager, ", "/kwok: ", "make envtest"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runPlayground(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if strings.Contains(stderr, "starting the control plane") {
				t.Errorf("the control plane started for bad input")
			}
			if strings.Contains(stderr, "logs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in") {
				t.Errorf("logs kept, but nothing ran")
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q", w)
				}
			}
		})
	}
}

// TestTimeout: when the wait times out, the command still prints what was
// placed, exits 1 and keeps the logs.
func TestTimeout(t *testing.T) {
	code, out, stderr := runPlayground(t, "--config", shippedConfig, "--scenario", tutorial, "--timeout", "1ms", "--output", "json")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if r := decodeResult(t, out); len(r.Nodes) != 3 {
		t.Errorf("result %+v, want the 3 nodes of the tutorial", r)
	}
	if !strings.Contains(stderr, "playground: not every pod was bound or found unschedulable within 1ms") {
		t.Errorf("stderr does not report the timeout")
	}
	const kept = "logs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in "
	i := strings.Index(stderr, kept)
	if i < 0 {
		t.Fatalf("stderr does not say where the logs are")
	}
	dir := strings.TrimSpace(strings.SplitN(stderr[i+len(kept):], "\n", 2)[0])
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, log := range []string{"playground.log", "run-1/etcd.log", "run-1/kube-apiserver.log", "run-1/kube-controller-manager.log", "run-1/kwok.log"} {
		if _, err := os.Stat(filepath.Join(dir, log)); err != nil {
			t.Errorf("log %s not kept: %v", log, err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestKeep runs the tutorial with --keep and the text output: the result is
// printed, the control plane stays up with a kubectl hint until Ctrl-C, and
// everything is gone after.
func TestKeep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--assets", assets, "--config", shippedConfig, "--scenario", tutorial, "--keep"}, &stdout, &stderr)
	}()
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(stderr.String(), "kubectl --kubeconfig ") {
		select {
		case code := <-done:
			t.Fatalf("run returned %d before Ctrl-C; stderr:\n%s", code, stderr.String())
		case <-deadline:
			t.Fatalf("no kubectl hint; stderr:\n%s", stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	line := stderr.String()[strings.Index(stderr.String(), "kubectl --kubeconfig "):]
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[3] != "get" {
		t.Fatalf("hint %q, want kubectl --kubeconfig PATH get pods -A -o wide", line)
	}
	if data, err := os.ReadFile(fields[2]); err != nil || !strings.Contains(string(data), "server:") {
		t.Errorf("kubeconfig %s: %v, content %q", fields[2], err, data)
	}
	// The tutorial's result, in text, printed before waiting.
	for _, want := range []string{"pods per node:", "tutorial-1  █", "tutorial-3  █", "default/test-pod-1", "-> tutorial-", "spread (max-min pods per node): 1\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the text output printed before waiting does not contain %q:\n%s", want, stdout.String())
		}
	}
	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after Ctrl-C, want 0", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return after Ctrl-C")
	}
	if _, err := os.Stat(fields[2]); !os.IsNotExist(err) {
		t.Errorf("kubeconfig %s still there after exit: %v", fields[2], err)
	}
}
