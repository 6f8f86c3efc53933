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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/adminsched/scheduler-plugins/internal/clusterbin"
	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// These tests run the real thing: etcd and kube-apiserver from
// KUBEBUILDER_ASSETS (default ../../bin) and our scheduler in-process.

var assets string

func TestMain(m *testing.M) {
	var err error
	if assets, err = localcluster.AssetsFromEnv("../../bin"); err != nil {
		fmt.Fprintf(os.Stderr, "cmd/playground tests run a real control plane: %v\n", err)
		os.Exit(1)
	}
	// No test builds the control plane into the user's cache: a command
	// that finds no --assets gets these, and a test that wants none
	// replaces ensureAssets itself.
	os.Setenv("KUBEBUILDER_ASSETS", assets)
	ensureAssets = func(context.Context, clusterbin.Options) (string, error) {
		return "", errors.New("a test would build the control plane into the user's cache")
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
	code := run(context.Background(), append(append([]string{"--assets", assets}, deschedulerArgs()...), args...), &stdout, &stderr)
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

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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

// keepRun runs the playground with --keep and returns, once the result is
// printed, its stdout and a client of its control plane; the run stops at
// the end of the test.
func keepRun(t *testing.T, args ...string) (string, kubernetes.Interface) {
	t.Helper()
	out, client, _ := keepRunKubeconfig(t, args...)
	return out, client
}

// keepRunKubeconfig is keepRun that also returns the kubeconfig file --keep
// prints.
func keepRunKubeconfig(t *testing.T, args ...string) (string, kubernetes.Interface, string) {
	t.Helper()
	k := keepRunAll(t, args...)
	return k.stdout, k.client, k.kubeconfig
}

// keptRun is what keepRunAll returns once the result and the banner are
// printed.
type keptRun struct {
	stdout, stderr, kubeconfig string
	client                     kubernetes.Interface
}

// keepRunAll runs the playground with --keep until the end of the test and
// returns, once the banner is printed, the output so far, the kubeconfig
// of the banner's export line and a client of the control plane.
func keepRunAll(t *testing.T, args ...string) keptRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"--assets", assets, "--keep"}, args...), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("run did not return after Ctrl-C")
		}
	})
	deadline := time.After(3 * time.Minute)
	for exportRE.FindString(stderr.String()) == "" {
		select {
		case code := <-done:
			done <- code // for the cleanup
			t.Fatalf("run returned %d before Ctrl-C; stderr:\n%s", code, stderr.String())
		case <-deadline:
			t.Fatalf("no export KUBECONFIG= line; stderr:\n%s", stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Logf("playground %s\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	kubeconfig := exportedKubeconfig(t, stderr.String())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return keptRun{stdout: stdout.String(), stderr: stderr.String(), kubeconfig: kubeconfig, client: client}
}

// exportRE is the line of --keep's banner that a shell applies (as
// test/docs does): export KUBECONFIG=... and maybe PATH=....
var exportRE = regexp.MustCompile(`(?m)^\s*(export KUBECONFIG=\S.*)$`)

// exportedKubeconfig is the KUBECONFIG of the banner's export line in
// stderr (an unquoted path: the playground's temp dirs need no quoting).
func exportedKubeconfig(t *testing.T, stderr string) string {
	t.Helper()
	m := exportRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no export KUBECONFIG= line in:\n%s", stderr)
	}
	return strings.TrimPrefix(strings.Fields(m[1])[1], "KUBECONFIG=")
}
