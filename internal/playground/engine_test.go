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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

// Play's runs need the control plane's binaries: cmd/playground's tests cover
// them. These cover what Play checks before it starts anything.

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
			want: []string{"invalid scenario:\n", badScenario, "nodes[1].allocatable.pods", `"many"`}},
		{name: "missing scenario", scenario: "nope.yaml", configs: []string{shippedConfig},
			want: []string{"invalid scenario:\n", "nope.yaml"}},
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
			want: []string{"invalid scenario:\n", "objects[0].spec.schedulerName", `"default-scheduler"`}},
		{name: "the scenario is checked against every config's profiles", scenario: otherScheduler,
			configs: []string{writeTemp(t, "default-scheduler.yaml", strings.Replace(readFile(t, defaultProfile), "custom-scheduler", "default-scheduler", 1)), defaultProfile},
			want:    []string{"invalid scenario:\n", "objects[0].spec.schedulerName", `"default-scheduler"`}},
		{name: "no config", scenario: tutorial, want: []string{"no scheduler config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var progress bytes.Buffer
			// The assets are missing too: the input is checked first.
			s, err := Play(ctx, Options{Assets: t.TempDir(), Scenario: tt.scenario, Configs: tt.configs,
				Timeout: time.Minute, WorkDir: t.TempDir(), Progress: &progress})
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
	s, err := Play(ctx, Options{Assets: t.TempDir(), Scenario: tutorial, Configs: []string{shippedConfig},
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

// TestPlayControlPlaneFailure: binaries that do not run are a run's failure,
// neither an input nor an assets error, and nothing is left running.
func TestPlayControlPlaneFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var progress bytes.Buffer
	s, err := Play(ctx, Options{Assets: fakeAssets(t), Scenario: tutorial, Configs: []string{shippedConfig},
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
	_, err := Play(ctx, Options{Scenario: tutorial, Configs: []string{shippedConfig}, WorkDir: t.TempDir()})
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

func TestTimedOut(t *testing.T) {
	live, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel2()
	<-expired.Done()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{name: "deadline passed", ctx: expired, err: errors.New("anything"), want: true},
		{name: "wrapped DeadlineExceeded", ctx: live, err: fmt.Errorf("creating pod: %w", context.DeadlineExceeded), want: true},
		{name: "rate limiter refusal before the deadline", ctx: live,
			err: errors.New("creating namespace default: client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"), want: true},
		{name: "API server rejection", ctx: live, err: errors.New("creating Deployment default/web: selector does not match template labels"), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := timedOut(tc.ctx, tc.err); got != tc.want {
				t.Errorf("timedOut = %v, want %v", got, tc.want)
			}
		})
	}
}
