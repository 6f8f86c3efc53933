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

package playground

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// The scenario tables run the real thing: etcd, kube-apiserver,
// kube-controller-manager and kwok from KUBEBUILDER_ASSETS (default
// ../../bin) and our scheduler in-process, through Play.

var assets string

func TestMain(m *testing.M) {
	var err error
	if assets, err = localcluster.AssetsFromEnv("../../bin"); err != nil {
		fmt.Fprintf(os.Stderr, "internal/playground tests run a real control plane: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

const scenarios = "../../examples/scenarios/"

// klog's global logger (the scheduler's logs) may be set only once: it
// writes to logOut, the log file of the test running, or nowhere.
var (
	logOnce   sync.Once
	logMu     sync.Mutex
	logOut    *os.File
	logConfig *textlogger.Config
)

type logWriter struct{}

func (logWriter) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	if logOut == nil {
		return len(p), nil
	}
	return logOut.Write(p)
}

// testLogger sends klog to path at verbosity v until the test ends.
func testLogger(t *testing.T, path string, v int) klog.Logger {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	logOnce.Do(func() {
		logConfig = textlogger.NewConfig(textlogger.Output(logWriter{}))
		klog.SetLoggerWithOptions(textlogger.NewLogger(logConfig), klog.ContextualLogger(true))
		crlog.SetLogger(textlogger.NewLogger(logConfig)) // envtest's, in localcluster
	})
	_ = logConfig.Verbosity().Set(strconv.Itoa(v))
	logMu.Lock()
	logOut = f
	logMu.Unlock()
	t.Cleanup(func() {
		logMu.Lock()
		logOut = nil
		logMu.Unlock()
		_ = f.Close()
	})
	return textlogger.NewLogger(logConfig)
}

// loadScenario decodes the scenario file at path, failing the test on an
// error.
func loadScenario(t *testing.T, path string) *scenario.File {
	t.Helper()
	f, err := LoadScenario(path, nil)
	if err != nil {
		t.Fatalf("LoadScenario: %v", err)
	}
	return f
}

// play runs opts through Play with the test's assets and a work directory
// and log of its own, and fails the test unless every run ended well.
func play(t *testing.T, opts Options) (*Session, string) {
	t.Helper()
	dir := t.TempDir()
	ctx := klog.NewContext(context.Background(), testLogger(t, filepath.Join(dir, "playground.log"), 2))
	var progress bytes.Buffer
	opts.Assets, opts.WorkDir, opts.Progress = assets, dir, &progress
	if opts.Timeout == 0 {
		opts.Timeout = time.Minute
	}
	start := time.Now()
	s, err := Play(ctx, opts)
	t.Logf("Play %s with %v in %v; progress:\n%s", opts.Scenario.Path, opts.Configs, time.Since(start).Round(time.Millisecond), progress.String())
	if err != nil {
		t.Fatalf("Play: %v", err)
	}
	if len(s.Runs) != len(opts.Configs) {
		t.Fatalf("%d runs, want one per config %v", len(s.Runs), opts.Configs)
	}
	for i, r := range s.Runs {
		if r.Config != opts.Configs[i] {
			t.Errorf("run %d of %s, want %s", i+1, r.Config, opts.Configs[i])
		}
		checkRan(t, r)
	}
	return s, progress.String()
}

// checkRan checks what a run says ran: its plan, and the nodes as created,
// the plan's first, in order, their placeholders expanded.
func checkRan(t *testing.T, r ConfigRun) {
	t.Helper()
	if r.Plan == nil {
		t.Fatalf("run of %s: no plan", r.Config)
	}
	if len(r.Nodes) < len(r.Plan.NodeNames) {
		t.Fatalf("run of %s: %d nodes, want at least the plan's %d", r.Config, len(r.Nodes), len(r.Plan.NodeNames))
	}
	for i, name := range r.Plan.NodeNames {
		n := r.Nodes[i]
		if n.Name != name {
			t.Errorf("run of %s: node %d is %s, want %s", r.Config, i, n.Name, name)
		}
		for k, v := range n.Annotations {
			if strings.Contains(v, "${now") {
				t.Errorf("run of %s: node %s: annotation %s=%q not expanded", r.Config, n.Name, k, v)
			}
		}
	}
}

func nodeOf(r report.Result) map[string]string {
	m := map[string]string{}
	for _, p := range r.Pods {
		m[p.Name] = p.Node
	}
	return m
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
