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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

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
	typo := writeFile(t, "typo.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: NodeLessPod
      filter:
        enabled:
          - name: PlacementPolcy
`)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		// kube-scheduler refuses these only once it builds the profile,
		// naming one of them at an extension point it expanded first.
		{name: "unknown plugins, before anything starts", args: []string{"--config", typo, "--scenario", tutorial}, wantCode: 2,
			want: []string{"playground: scheduler config " + typo,
				`profiles[0].plugins.filter.enabled[0].name: Invalid value: "PlacementPolcy": no such plugin; did you mean "PlacementPolicy"?`,
				`profiles[0].plugins.multiPoint.enabled[0].name: Invalid value: "NodeLessPod": no such plugin; did you mean "NodeLessPods"?`}},
		{name: "invalid plugin args", args: []string{"--config", badMode, "--scenario", tutorial}, wantCode: 2,
			want: []string{"playground: scheduler config " + badMode, "profiles[0].pluginConfig[0].args.mode", `Unsupported value: "Fewest"`}},
		{name: "bad output", args: []string{"--output", "xml"}, wantCode: 2, want: []string{`invalid argument "xml" for "-o, --output" flag: must be one of text, json, yaml`}},
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
// placed, exits 1 and keeps the logs; with --keep too, it reports the
// error once and stops the control plane instead of keeping it up.
func TestTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"--assets", assets, "--config", shippedConfig, "--scenario", tutorial, "--timeout", "1ms", "--output", "json", "--keep"}, &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if ctx.Err() != nil {
		t.Fatal("--keep held the failed run up until Ctrl-C")
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if r := decodeResult(t, stdout.String()); len(r.Nodes) != 3 {
		t.Errorf("result %+v, want the 3 nodes of the tutorial", r)
	}
	if n := strings.Count(stderr.String(), "not every pod was bound or found unschedulable within 1ms"); n != 1 {
		t.Errorf("stderr reports the timeout %d times, want once", n)
	}
	if !strings.Contains(stderr.String(), "--keep: the run failed, so the control plane and the scheduler are stopped\n") || strings.Contains(stderr.String(), "export KUBECONFIG=") {
		t.Errorf("stderr does not say that --keep did not keep the failed run")
	}
	const kept = "logs (scheduler, etcd, kube-apiserver, kube-controller-manager, kwok) kept in "
	i := strings.Index(stderr.String(), kept)
	if i < 0 {
		t.Fatalf("stderr does not say where the logs are")
	}
	dir := strings.TrimSpace(strings.SplitN(stderr.String()[i+len(kept):], "\n", 2)[0])
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, log := range []string{"playground.log", "run-1/etcd.log", "run-1/kube-apiserver.log", "run-1/kube-controller-manager.log", "run-1/kwok.log"} {
		if _, err := os.Stat(filepath.Join(dir, log)); err != nil {
			t.Errorf("log %s not kept: %v", log, err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "run-1", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := client.Discovery().ServerVersion(); err == nil {
		t.Errorf("the control plane of the failed run still answers (%s)", v)
	}
}

// TestDefaultsFromAnotherFolder: run from a folder that is not the
// repository's, without --config and --scenario, the playground runs its
// built-in tutorial and config and names them so; -o yaml gives the
// document -o json does.
func TestDefaultsFromAnotherFolder(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, stderr := runPlayground(t, "-o", "yaml")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if !strings.Contains(stderr, "starting the scheduler from manifests/nodelesspods/scheduler-config.yaml (built in) (profiles: custom-scheduler)") {
		t.Errorf("stderr does not name the built-in config")
	}
	var r report.Result
	if err := yaml.UnmarshalStrict([]byte(out), &r); err != nil {
		t.Fatalf("decoding -o yaml: %v\n%s", err, out)
	}
	if len(r.Pods) != 7 || len(r.Nodes) != 3 || r.Spread > 1 {
		t.Errorf("%d pods on %d nodes, spread %d: want the tutorial's 7 on 3, spread at most 1", len(r.Pods), len(r.Nodes), r.Spread)
	}
}

// TestKeep runs the tutorial with --keep and the text output: the result is
// printed, the control plane stays up with an export KUBECONFIG= line
// until Ctrl-C, and everything is gone after.
func TestKeep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--assets", assets, "--config", shippedConfig, "--scenario", tutorial, "--keep"}, &stdout, &stderr)
	}()
	deadline := time.After(2 * time.Minute)
	for exportRE.FindString(stderr.String()) == "" {
		select {
		case code := <-done:
			t.Fatalf("run returned %d before Ctrl-C; stderr:\n%s", code, stderr.String())
		case <-deadline:
			t.Fatalf("no export KUBECONFIG= line; stderr:\n%s", stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	kubeconfig := exportedKubeconfig(t, stderr.String())
	if data, err := os.ReadFile(kubeconfig); err != nil || !strings.Contains(string(data), "server:") {
		t.Errorf("kubeconfig %s: %v, content %q", kubeconfig, err, data)
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
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig %s still there after exit: %v", kubeconfig, err)
	}
}

// TestKeepApply is the README's flow: the cluster --keep leaves up behaves
// as a real one. On the tutorial's nodes alone
// (examples/scenarios/tutorial-nodes.yaml), `kubectl apply -k
// manifests/examples` with the real kubectl (bin/kubectl, `make kubectl`;
// or $KUBECTL) ends up Running: the Deployment's 5 pods, made by its
// controllers, and the 2 bare pods, on the scenario's nodes.
func TestKeepApply(t *testing.T) {
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl = filepath.Join(assets, "kubectl")
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("this test runs kubectl (%v): build it with `make kubectl`, or set KUBECTL", err)
	}
	_, client, kubeconfig := keepRunKubeconfig(t, "--config", shippedConfig, "--scenario", scenarios+"tutorial-nodes.yaml")
	ctx := context.Background()
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "-k", "../../manifests/examples").CombinedOutput()
	t.Logf("kubectl apply -k manifests/examples:\n%s", out)
	if err != nil {
		t.Fatalf("kubectl apply: %v", err)
	}

	var last []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last = last[:0]
		replicas, bare := 0, 0
		for _, p := range list.Items {
			last = append(last, p.Name+" "+string(p.Status.Phase)+" on "+p.Spec.NodeName)
			if p.Status.Phase != corev1.PodRunning || !strings.HasPrefix(p.Spec.NodeName, "tutorial-") {
				continue
			}
			switch {
			case strings.HasPrefix(p.Name, "test-deployment-"):
				replicas++
			case p.Name == "test-pod-1" || p.Name == "test-pod-2":
				bare++
			}
		}
		return replicas == 5 && bare == 2 && len(list.Items) == 7, nil
	})
	if err != nil {
		t.Errorf("want the 5 replicas and the 2 bare pods Running on tutorial nodes; pods: %v", last)
	}
	out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-o", "wide").CombinedOutput()
	t.Logf("kubectl get pods -o wide (%v):\n%s", err, out)
}

// TestExplainCompare runs the tutorial with the shipped config and the
// default profile, explained, in JSON decoded into the exported types, then
// renders the same runs as text; and checks that --explain-nodes limits the
// candidates.
func TestExplainCompare(t *testing.T) {
	code, out, _ := runPlayground(t, "--config", shippedConfig, "--compare", defaultProfile, "--scenario", tutorial,
		"--explain", "--explain-nodes", "2", "--output", "json")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	var doc struct {
		Runs []report.Run `json:"runs"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding the JSON output into the exported types: %v\n%s", err, out)
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}
	// Both configs name their profile custom-scheduler.
	const profile = "custom-scheduler"
	for i, run := range doc.Runs {
		for _, p := range run.Result.Pods {
			// The explanation's sums are internal/playground's
			// TestExplainTutorial's and report's: here, that both runs'
			// explanations reach the output.
			if p.Explain == nil || p.Node == "" || p.Explain.Chosen != p.Node {
				t.Errorf("run %d, pod %s on %q: explanation %+v, want one that chose its node", i+1, p.Name, p.Node, p.Explain)
				continue
			}
			if p.Explain.Profile != profile || len(p.Explain.Candidates) != 2 {
				t.Errorf("run %d, pod %s: profile %q, %d candidates; want %s and 2", i+1, p.Name, p.Explain.Profile, len(p.Explain.Candidates), profile)
			}
			if hasNLP := indexOf(p.Explain.Plugins, "NodeLessPods") >= 0; hasNLP != (i == 0) {
				t.Errorf("run %d, pod %s: NodeLessPods among the plugins: %v", i+1, p.Name, hasNLP)
			}
		}
	}
	var text bytes.Buffer
	if err := writeOutput(&text, "text", true, doc.Runs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"explanations", "default/test-pod-1\n  [1] " + shippedConfig + " -> tutorial-", "  [2] " + defaultProfile + " -> tutorial-", "NodeLessPods", "total"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, text.String())
		}
	}
}

func indexOf(ps []report.PluginWeight, name string) int {
	for i, p := range ps {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// TestExplainSeatWaiting: --explain's text names DynamicResources'
// rejection, on every node, for a pod waiting for a license seat (the
// engine's scenario internal/playground/testdata/seats-waiting.yaml: 2
// seats, 3 pods).
func TestExplainSeatWaiting(t *testing.T) {
	if !kubeversion.Has(kubeversion.DRAExtendedResource) {
		// Its pods ask for seats in resources.limits.
		t.Skipf("%s", kubeversion.Unavailable(kubeversion.DRAExtendedResource).Error())
	}
	code, out, _ := runPlayground(t, "--config", shippedConfig, "--scenario", "../../internal/playground/testdata/seats-waiting.yaml", "--explain")
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	for _, re := range []string{
		`-> <none>: Unschedulable: 0/2 nodes are available: 2 cannot allocate all claims\.`,
		`\n  filtered out:\n    Filter +DynamicResources +UnschedulableAndUnresolvable +cannot allocate all claims +worker-1, worker-2\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text output does not match %q:\n%s", re, out)
		}
	}
}
