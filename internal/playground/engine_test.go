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
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
)

// These cover what Play checks before it starts anything, and what it
// explains; run_test.go covers the scenarios' runs.

const (
	shippedConfig  = "../../manifests/nodelesspods/scheduler-config.yaml"
	tutorial       = "../../examples/scenarios/tutorial.yaml"
	defaultProfile = "../../examples/scenarios/default-profile-config.yaml"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fakeAssets returns a directory with executable, never run, etcd and
// kube-apiserver files: enough for Play's check of the assets.
func fakeAssets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, bin := range localcluster.Binaries {
		if err := os.WriteFile(filepath.Join(dir, bin), []byte("#!/bin/sh\nexit 1\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPlayRejectsBadInput(t *testing.T) {
	badScenario := writeTemp(t, "bad-scenario.yaml", "nodes:\n  - name: a\n  - name: b\n    allocatable: {pods: many}\n")
	badMode := writeTemp(t, "bad-mode.yaml", `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    pluginConfig:
      - name: NodeLessPods
        args: {mode: Fewest}
`)
	badArgsField := writeTemp(t, "bad-args.yaml", strings.Replace(readFile(t, shippedConfig), "ignoreDaemonSetPods: true", "ignoreDaemonSetPod: true", 1))
	badConfigField := writeTemp(t, "bad-config.yaml", readFile(t, shippedConfig)+"parallelism: 0\n")
	otherScheduler := writeTemp(t, "other-scheduler.yaml",
		"nodes: [{name: a}]\nobjects:\n- {kind: Pod, metadata: {name: p}, spec: {schedulerName: default-scheduler, containers: [{name: c, image: i}]}}\n")
	tests := []struct {
		name     string
		scenario string
		configs  []string
		want     []string
	}{
		{name: "bad quantity", scenario: badScenario, configs: []string{shippedConfig},
			want: []string{"invalid scenario: ", badScenario, "nodes[1].allocatable.pods", `"many"`}},
		{name: "missing scenario", scenario: "nope.yaml", configs: []string{shippedConfig},
			want: []string{"invalid scenario: ", "nope.yaml"}},
		{name: "missing config", scenario: tutorial, configs: []string{"nope-config.yaml"},
			want: []string{"scheduler config", "nope-config.yaml"}},
		{name: "invalid plugin args", scenario: tutorial, configs: []string{badMode},
			want: []string{"scheduler config " + badMode, "profiles[0].pluginConfig[0].args.mode", `Unsupported value: "Fewest"`}},
		{name: "unknown plugin args field", scenario: tutorial, configs: []string{badArgsField},
			want: []string{"scheduler config " + badArgsField, "NodeLessPods", `unknown field "ignoreDaemonSetPod"`}},
		{name: "invalid config field", scenario: tutorial, configs: []string{badConfigField},
			want: []string{"scheduler config " + badConfigField, "parallelism: Invalid value: 0"}},
		{name: "the compared config is checked too", scenario: tutorial, configs: []string{shippedConfig, badMode},
			want: []string{"scheduler config " + badMode, `Unsupported value: "Fewest"`}},
		{name: "scheduler name not in the config", scenario: otherScheduler, configs: []string{defaultProfile},
			want: []string{"invalid scenario: ", "objects[0].spec.schedulerName", `"default-scheduler"`}},
		{name: "the scenario is checked against every config's profiles", scenario: otherScheduler,
			configs: []string{writeTemp(t, "default-scheduler.yaml", strings.Replace(readFile(t, defaultProfile), "custom-scheduler", "default-scheduler", 1)), defaultProfile},
			want:    []string{"invalid scenario: ", "objects[0].spec.schedulerName", `"default-scheduler"`}},
		{name: "no config", scenario: tutorial, want: []string{"no scheduler config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var progress bytes.Buffer
			// The assets are missing too: the input is checked first.
			var s *Session
			f, err := LoadScenario(tt.scenario, nil)
			if err == nil {
				s, err = Play(ctx, Options{Assets: t.TempDir(), Scenario: f, Configs: tt.configs,
					Timeout: time.Minute, WorkDir: t.TempDir(), Progress: &progress})
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an *InputError", err, err)
			}
			if s != nil {
				t.Errorf("session %+v, want none", s)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if progress.Len() > 0 {
				t.Errorf("progress %q: something started for bad input", progress.String())
			}
		})
	}
}

func TestPlayChecksAssets(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var progress bytes.Buffer
	s, err := Play(ctx, Options{Assets: t.TempDir(), Scenario: loadScenario(t, tutorial), Configs: []string{shippedConfig},
		Timeout: time.Minute, WorkDir: t.TempDir(), Progress: &progress})
	var ae *AssetsError
	if !errors.As(err, &ae) || s != nil {
		t.Fatalf("session %v, error %v (%T): want an *AssetsError", s, err, err)
	}
	for _, w := range []string{"/etcd, ", "kube-controller-manager", "kwok", "make envtest"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	if progress.Len() > 0 {
		t.Errorf("progress %q: something started without the binaries", progress.String())
	}
}

// TestCheckBuiltin: a name in Options.Builtin is read from there, not from
// the file system (no such file exists here), and names the file in errors.
func TestCheckBuiltin(t *testing.T) {
	const config, scenarioName = "config.yaml (built in)", "scenario.yaml (built in)"
	tests := []struct {
		name     string
		scenario string
		// want is a substring of the InputError; empty: the inputs pass
		// and the missing assets are reported.
		want string
	}{
		{name: "valid", scenario: readFile(t, tutorial)},
		{name: "invalid scenario", scenario: "nodes: [{name: a, allocatable: {pods: many}}]\n",
			want: scenarioName + ": nodes[0].allocatable.pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			builtin := map[string][]byte{config: []byte(readFile(t, shippedConfig)), scenarioName: []byte(tt.scenario)}
			f, loadErr := LoadScenario(scenarioName, builtin)
			opts := Options{Assets: t.TempDir(), Scenario: f, Configs: []string{config}, Builtin: builtin,
				Timeout: time.Minute, WorkDir: t.TempDir()}
			// CheckInputs stops before the binaries: valid inputs pass.
			inputErr := loadErr
			if inputErr == nil {
				inputErr = CheckInputs(ctx, opts)
			}
			var ie *InputError
			switch {
			case tt.want == "" && inputErr != nil:
				t.Errorf("CheckInputs: %v, want nil for valid inputs without binaries", inputErr)
			case tt.want != "" && (!errors.As(inputErr, &ie) || !strings.Contains(inputErr.Error(), tt.want)):
				t.Errorf("CheckInputs: %v (%T), want an *InputError containing %q", inputErr, inputErr, tt.want)
			}
			err := loadErr
			if err == nil {
				err = Check(ctx, opts)
			}
			var ae *AssetsError
			switch {
			case tt.want == "" && !errors.As(err, &ae):
				t.Errorf("error %v (%T), want the *AssetsError that follows valid inputs", err, err)
			case tt.want != "" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v (%T), want an *InputError containing %q", err, err, tt.want)
			}
		})
	}
}

// TestScenarioDecodedOnce: the engine plans the scenario it was given for
// each config, and never reads the file again: removed after LoadScenario,
// it is still checked against both configs' profiles.
func TestScenarioDecodedOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	path := writeTemp(t, "s.yaml", readFile(t, tutorial))
	f, err := LoadScenario(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	opts := Options{Scenario: f, Configs: []string{shippedConfig, defaultProfile}, Timeout: time.Minute, WorkDir: t.TempDir()}
	if err := CheckInputs(ctx, opts); err != nil {
		t.Fatalf("CheckInputs of a scenario decoded before its file went: %v", err)
	}
	// Without the engine's own read, a scenario that does not fit a
	// config's profiles is still refused, per config.
	other, err := LoadScenario(writeTemp(t, "other.yaml",
		"nodes: [{name: a}]\nobjects:\n- {kind: Pod, metadata: {name: p}, spec: {schedulerName: default-scheduler, containers: [{name: c, image: i}]}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Scenario = other
	var ie *InputError
	if err := CheckInputs(ctx, opts); !errors.As(err, &ie) || !strings.Contains(err.Error(), "objects[0].spec.schedulerName") {
		t.Errorf("CheckInputs: %v (%T), want an *InputError naming objects[0].spec.schedulerName", err, err)
	}
}

// TestPlayControlPlaneFailure: binaries that do not run are a run's failure,
// neither an input nor an assets error, and nothing is left running.
func TestPlayControlPlaneFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var progress bytes.Buffer
	s, err := Play(ctx, Options{Assets: fakeAssets(t), Scenario: loadScenario(t, tutorial), Configs: []string{shippedConfig},
		Timeout: time.Minute, WorkDir: t.TempDir(), Progress: &progress})
	var ie *InputError
	var ae *AssetsError
	if err == nil || s != nil || errors.As(err, &ie) || errors.As(err, &ae) {
		t.Fatalf("session %v, error %v (%T): want a run failure", s, err, err)
	}
	if !strings.Contains(err.Error(), "starting the control plane") {
		t.Errorf("error %q does not say the control plane did not start", err)
	}
	if !strings.Contains(progress.String(), "starting the control plane (etcd, kube-apiserver, kube-controller-manager, kwok) from ") {
		t.Errorf("progress %q, want the start of the control plane", progress.String())
	}
}

func TestPlayRejectsBadOptions(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	_, err := Play(ctx, Options{Scenario: loadScenario(t, tutorial), Configs: []string{shippedConfig}, WorkDir: t.TempDir()})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "timeout must be positive") {
		t.Errorf("error %v, want an *InputError about the timeout", err)
	}
}

func TestSessionStopWithoutKeep(t *testing.T) {
	var s *Session
	s.Stop() // a nil session
	calls := 0
	s = &Session{stop: func() { calls++ }}
	s.Stop()
	s.Stop()
	if calls != 1 {
		t.Errorf("stop called %d times, want once", calls)
	}
}

var (
	// The scheduler's -v=10 lines, written by prioritizeNodes from the
	// framework's RunScorePlugins result: the weighted score of a plugin
	// and the total of a node.
	pluginScoredRE = regexp.MustCompile(`"Plugin scored node for pod".*?\bpod="([^"]+)".*?\bplugin="([^"]+)".*?\bnode="([^"]+)".*?\bscore=(-?\d+)`)
	finalScoreRE   = regexp.MustCompile(`"Calculated node's final score for pod".*?\bpod="([^"]+)".*?\bnode="([^"]+)".*?\bscore=(-?\d+)`)
)

// checkExplanation checks what holds for any explained, bound pod: the
// explanation's chosen node is the node the API server has, every
// candidate's total is the sum of weight*normalized score, and no
// candidate beats the chosen node.
func checkExplanation(t *testing.T, p report.PodResult) {
	t.Helper()
	e := p.Explain
	if e == nil {
		t.Errorf("pod %s: no explanation", p.Name)
		return
	}
	if p.Node == "" || e.Chosen != p.Node {
		t.Errorf("pod %s bound to %q, the explanation chose %q", p.Name, p.Node, e.Chosen)
	}
	chosen := -1
	var best int64
	for i, c := range e.Candidates {
		var sum int64
		for j, s := range c.Scores {
			if s.Plugin != e.Plugins[j].Name || s.Weight != e.Plugins[j].Weight {
				t.Errorf("pod %s, node %s: score %d is %s weight %d, want %+v", p.Name, c.Node, j, s.Plugin, s.Weight, e.Plugins[j])
			}
			if s.Normalized < 0 || s.Normalized > 100 || s.Weighted != s.Normalized*int64(s.Weight) {
				t.Errorf("pod %s, node %s: %+v", p.Name, c.Node, s)
			}
			sum += s.Normalized * int64(s.Weight)
		}
		if sum != c.Total {
			t.Errorf("pod %s, node %s: sum of weight*normalized %d, total %d", p.Name, c.Node, sum, c.Total)
		}
		if c.Chosen {
			chosen = i
		}
		best = max(best, c.Total)
	}
	if chosen < 0 || e.Candidates[chosen].Node != e.Chosen {
		t.Errorf("pod %s: the chosen node %s is not marked among the candidates %+v", p.Name, e.Chosen, e.Candidates)
	} else if e.Scored && e.Candidates[chosen].Total != best {
		t.Errorf("pod %s: chosen %s totals %d, a candidate has %d", p.Name, e.Chosen, e.Candidates[chosen].Total, best)
	}
}

// TestExplainTutorial explains the tutorial and checks every scheduled pod's
// breakdown against an independent source: the scheduler's own -v=10 log
// lines, which print each plugin's weighted score and each node's total as
// the framework computed them.
func TestExplainTutorial(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "playground.log")
	ctx := klog.NewContext(context.Background(), testLogger(t, logPath, 10))
	session, err := Play(ctx, Options{
		Assets: assets, Scenario: loadScenario(t, tutorial), Configs: []string{shippedConfig},
		Timeout: 60 * time.Second, WorkDir: dir, Explain: true, ExplainNodes: 10,
	})
	if err != nil {
		t.Fatalf("Play: %v", err)
	}
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The last value per pod and node (and plugin) wins, as the
	// explanation keeps the last attempt.
	totals := map[string]int64{}   // pod/node
	weighted := map[string]int64{} // pod/node/plugin
	for _, line := range strings.Split(string(logs), "\n") {
		if m := pluginScoredRE.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseInt(m[4], 10, 64)
			weighted[m[1]+"/"+m[3]+"/"+m[2]] = v
		} else if m := finalScoreRE.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseInt(m[3], 10, 64)
			totals[m[1]+"/"+m[2]] = v
		}
	}
	if len(totals) == 0 {
		t.Fatalf("no \"Calculated node's final score\" line in the -v=10 log")
	}

	r := session.Runs[0].Result
	if len(r.Pods) != 7 {
		t.Fatalf("%d pods, want 7", len(r.Pods))
	}
	for _, p := range r.Pods {
		checkExplanation(t, p)
		e := p.Explain
		if e == nil {
			continue
		}
		if !e.Scored || e.Feasible != 3 || len(e.Candidates) != 3 || len(e.Filtered) != 0 || e.Attempt != 1 {
			t.Errorf("pod %s: %d feasible, %d candidates, scored %v, filtered %v, attempt %d; want the 3 nodes scored in 1 attempt",
				p.Name, e.Feasible, len(e.Candidates), e.Scored, e.Filtered, e.Attempt)
		}
		pod := p.Namespace + "/" + p.Name
		for _, c := range e.Candidates {
			if got, ok := totals[pod+"/"+c.Node]; !ok || got != c.Total {
				t.Errorf("pod %s, node %s: total %d, the scheduler logged %d (found %v)", p.Name, c.Node, c.Total, got, ok)
			}
			for _, s := range c.Scores {
				if got, ok := weighted[pod+"/"+c.Node+"/"+s.Plugin]; !ok || got != s.Weighted {
					t.Errorf("pod %s, node %s, plugin %s: weighted %d, the scheduler logged %d (found %v)", p.Name, c.Node, s.Plugin, s.Weighted, got, ok)
				}
			}
		}
		// NodeLessPods, weight 3, is in the breakdown.
		if i := indexOf(e.Plugins, "NodeLessPods"); i < 0 || e.Plugins[i].Weight != 3 {
			t.Errorf("pod %s: plugins %+v, want NodeLessPods with weight 3", p.Name, e.Plugins)
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
