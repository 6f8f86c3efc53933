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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/internal/playground/schedconfig"
)

// noopPolicy is a policy whose only strategy finds nothing to do here:
// no pod restarts under KWOK.
const noopPolicy = `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: noop
    pluginConfig:
      - name: RemovePodsHavingTooManyRestarts
        args: {podRestartThreshold: 100}
    plugins:
      deschedule:
        enabled: [RemovePodsHavingTooManyRestarts]
`

// deschedulerForTest is bin/descheduler: $DESCHEDULER_BINARY, else the
// assets' (make descheduler builds it there).
func deschedulerForTest(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("DESCHEDULER_BINARY")
	if bin == "" {
		bin = filepath.Join(assets, DeschedulerBinary)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the descheduler: %v: build it with `make descheduler` (or set DESCHEDULER_BINARY)", err)
	}
	return bin
}

// TestDeschedulerInputs: which policy a run takes, and the errors that
// say what is missing, before anything starts.
func TestDeschedulerInputs(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(noopPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("kind: KubeSchedulerConfiguration\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const steps = "nodes: [{name: a}]\nsteps: [{deschedule: {cycles: 1}}]\n"
	tests := []struct {
		name, scenario string
		opts           Descheduler
		// want is the policy, or wantErr a part of the *InputError.
		want, wantErr string
	}{
		{name: "the scenario's, relative to it", scenario: steps + "descheduler: policy.yaml\n", want: policy},
		{name: "the flag's first", scenario: steps + "descheduler: other.yaml\n", opts: Descheduler{Policy: "given.yaml"}, want: "given.yaml"},
		{name: "none without deschedule steps", scenario: "nodes: [{name: a}]\n"},
		{name: "steps without a policy", scenario: steps, wantErr: "the scenario's deschedule steps need a descheduler policy: give --descheduler POLICY"},
		{name: "a policy without steps", scenario: "nodes: [{name: a}]\ndescheduler: policy.yaml\n", wantErr: "the scenario has no deschedule step"},
		{name: "a missing policy", scenario: steps, opts: Descheduler{Policy: filepath.Join(dir, "nope.yaml")}, wantErr: "nope.yaml: no such file"},
		{name: "not a policy", scenario: steps, opts: Descheduler{Policy: filepath.Join(dir, "config.yaml")}, wantErr: "want apiVersion descheduler/v1alpha2 and kind DeschedulerPolicy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := scenario.Decode(filepath.Join(dir, "s.yaml"), []byte(tt.scenario))
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Scenario: f, Descheduler: tt.opts}
			got, err := deschedulerPolicy(opts)
			if err == nil && tt.wantErr != "" {
				err = checkDescheduler(opts)
			}
			var inputErr *InputError
			switch {
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("policy %q, %v; want %q", got, err, tt.want)
			case tt.wantErr != "" && (!errors.As(err, &inputErr) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want an *InputError with %q", err, tt.wantErr)
			}
		})
	}
}

// TestPrepareDescheduler: the binary must be there, saying how to build
// it; every PolicyEvictor gets the run's scheduler config.
func TestPrepareDescheduler(t *testing.T) {
	dir := t.TempDir()
	f := loadScenario(t, scenarios+"rebalance.yaml")
	sc := &schedconfig.Config{Path: filepath.Join(dir, "scheduler-config.yaml"), Kubeconfig: filepath.Join(dir, "kubeconfig")}
	_, err := prepareDescheduler(Options{Scenario: f, Assets: dir}, sc)
	var assetsErr *AssetsError
	if !errors.As(err, &assetsErr) || !strings.Contains(err.Error(), "build it with `make descheduler` (or give --descheduler-binary)") {
		t.Errorf("without the binary: %v, want an *AssetsError saying make descheduler", err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := prepareDescheduler(Options{Scenario: f, Descheduler: Descheduler{Binary: bin}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(d.policy)
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(data, &policy); err != nil {
		t.Fatal(err)
	}
	evictors := 0
	for _, pc := range policy.Profiles[0].PluginConfig {
		if pc.Name == policyEvictor {
			evictors++
			if pc.Args["schedulerConfig"] != sc.Path || pc.Args["schedulerName"] != "custom-scheduler" {
				t.Errorf("PolicyEvictor's args %v: want schedulerConfig %s, the rest as written", pc.Args, sc.Path)
			}
		}
	}
	if evictors != 1 || d.binary != bin || d.kubeconfig != sc.Kubeconfig || filepath.Dir(d.log) != dir {
		t.Errorf("%d PolicyEvictors, descheduler %+v: want 1, %s, the run's kubeconfig and directory", evictors, d, bin)
	}
}

// TestEvicted: only the Eviction API's condition counts, not the
// scheduler's preemption.
func TestEvicted(t *testing.T) {
	pod := func(status corev1.ConditionStatus, reason string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: status, Reason: reason}}}}
	}
	if !evicted(pod(corev1.ConditionTrue, evictionReason)) || evicted(pod(corev1.ConditionFalse, evictionReason)) ||
		evicted(pod(corev1.ConditionTrue, "PreemptionByScheduler")) || evicted(&corev1.Pod{}) {
		t.Error("evicted: want true only for DisruptionTarget True by the Eviction API")
	}
}

// TestPlayRebalance: examples/scenarios/rebalance.yaml with the real
// descheduler. The 12 replicas fill the 3 old nodes, the 3 new ones join
// empty; the policy's cycles evict 6 and the spread profile puts them on
// the new nodes: 2 per node. With a policy that finds nothing to do, the
// same steps leave the new nodes empty.
func TestPlayRebalance(t *testing.T) {
	bin := deschedulerForTest(t)
	f := loadScenario(t, scenarios+"rebalance.yaml")
	config := scenarios + "rebalance-config.yaml"
	s, progress := play(t, Options{Scenario: f, Configs: []string{config}, Descheduler: Descheduler{Binary: bin}})
	r := s.Runs[0]
	steps := r.Result.Steps
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2", len(steps))
	}
	wantCounts(t, "after the nodes joined", steps[0].Nodes, map[string]int{"old-1": 4, "old-2": 4, "old-3": 4, "new-1": 0, "new-2": 0, "new-3": 0})
	if steps[0].Evicted != nil || steps[1].Evicted == nil || *steps[1].Evicted != 6 {
		t.Errorf("evicted %v (nil: %v) by addNodes, %d by deschedule: want nil, 6", steps[0].Evicted, steps[0].Evicted == nil, ptr.Deref(steps[1].Evicted, -1))
	}
	two := map[string]int{"old-1": 2, "old-2": 2, "old-3": 2, "new-1": 2, "new-2": 2, "new-3": 2}
	wantCounts(t, "after the descheduler", steps[1].Nodes, two)
	wantCounts(t, "at the end", r.Result.Nodes, two)
	if len(r.Nodes) != 6 || r.Nodes[5].Name != "new-3" {
		t.Errorf("the run's nodes: %d, want the 3 old then the 3 added", len(r.Nodes))
	}
	for _, want := range []string{"step 1/2: add nodes new-1, new-2, new-3\n", "descheduler cycle 1/3: 6 evicted\n", "descheduler cycle 3/3: 0 evicted\n",
		"pods per node: old-1=2 old-2=2 old-3=2 new-1=2 new-2=2 new-3=2, 6 evicted\n"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q", want)
		}
	}

	policy := filepath.Join(t.TempDir(), "noop.yaml")
	if err := os.WriteFile(policy, []byte(noopPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ = play(t, Options{Scenario: f, Configs: []string{config}, Descheduler: Descheduler{Binary: bin, Policy: policy}})
	if ev := s.Runs[0].Result.Steps[1].Evicted; ev == nil || *ev != 0 {
		t.Errorf("evicted %d with a policy that does nothing, want 0", ptr.Deref(ev, -1))
	}
	wantCounts(t, "with a policy that does nothing", s.Runs[0].Result.Nodes, map[string]int{"old-1": 4, "old-2": 4, "old-3": 4, "new-1": 0, "new-2": 0, "new-3": 0})
}

// wantCounts checks the pods per node.
func wantCounts(t *testing.T, what string, nodes []report.NodeResult, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, n := range nodes {
		got[n.Name] = n.Pods
	}
	if len(got) != len(want) {
		t.Errorf("%s: pods per node %v, want %v", what, got, want)
		return
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: pods per node %v, want %v", what, got, want)
			return
		}
	}
}
