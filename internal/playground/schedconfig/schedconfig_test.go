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

package schedconfig

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

const configHeader = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// TestPrepareAsKubeScheduler: the playground accepts exactly the
// configs kube-scheduler's --config loading accepts (LoadConfigFromFile,
// then validation), checked here against that loader on the same file.
func TestPrepareAsKubeScheduler(t *testing.T) {
	tests := []struct {
		name   string
		config string
		// wantErr is a substring of both errors; empty means both load.
		wantErr string
		// wantBackoff is the copy's podMaxBackoffSeconds when it loads.
		wantBackoff int64
	}{
		{name: "plain", config: configHeader + "profiles: [{schedulerName: custom-scheduler}]\n", wantBackoff: 10},
		{name: "repeated profiles key", config: configHeader + "profiles: [{schedulerName: a}]\nprofiles: [{schedulerName: b}]\n",
			wantErr: `key "profiles" already set in map`},
		{name: "largest int64", config: configHeader + "podMaxBackoffSeconds: 9223372036854775807\n", wantBackoff: math.MaxInt64},
		{name: "beyond int64", config: configHeader + "podMaxBackoffSeconds: 9223372036854775808\n", wantErr: "podMaxBackoffSeconds"},
		{name: "unknown field", config: configHeader + "profile: []\n", wantErr: `unknown field "profile"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			dir := t.TempDir()
			source := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(source, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			// What kube-scheduler --config does with the file.
			realErr := func() error {
				cfg, err := options.LoadConfigFromFile(logger, source)
				if err != nil {
					return err
				}
				return validation.ValidateKubeSchedulerConfiguration(cfg)
			}()
			sc, err := Prepare(logger, source, []byte(tt.config), filepath.Join(dir, "run"))
			for what, err := range map[string]error{"kube-scheduler": realErr, "playground": err} {
				if tt.wantErr == "" && err != nil {
					t.Fatalf("%s: unexpected error: %v", what, err)
				}
				if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
					t.Fatalf("%s: error %v, want one containing %q", what, err, tt.wantErr)
				}
			}
			if tt.wantErr != "" {
				return
			}
			cfg, err := options.LoadConfigFromFile(logger, sc.Path)
			if err != nil {
				t.Fatalf("the copy the scheduler reads: %v", err)
			}
			if diff := cmp.Diff(tt.wantBackoff, cfg.PodMaxBackoffSeconds); diff != "" {
				t.Errorf("podMaxBackoffSeconds of the copy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sc.Kubeconfig, cfg.ClientConnection.Kubeconfig); diff != "" {
				t.Errorf("kubeconfig of the copy (-want +got):\n%s", diff)
			}
			if cfg.LeaderElection.LeaderElect {
				t.Error("the copy elects a leader")
			}
		})
	}
}

// TestFileLimits: a scheduler config is read only up to MaxBytes, and a
// device is refused, before anything is decoded.
func TestFileLimits(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	dir := t.TempDir()
	config := configHeader + "profiles: [{schedulerName: custom-scheduler}]\n"
	sized := func(name string, size int) string {
		data := config + "#" + strings.Repeat("x", size-len(config)-2) + "\n"
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	atCap, overCap := sized("at-cap.yaml", MaxBytes), sized("over-cap.yaml", MaxBytes+1)
	tooLarge := fmt.Sprintf("larger than 1 MiB (%d bytes), the most a scheduler config file may hold", MaxBytes)
	tests := []struct {
		name, path, want string
	}{
		{name: "at the cap", path: atCap},
		{name: "one byte over", path: overCap, want: overCap + " is " + tooLarge},
		{name: "/dev/zero", path: "/dev/zero", want: "scheduler config: /dev/zero is a device, not a regular file: a scheduler config file must be a file"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Read(tt.path, nil)
			if err == nil {
				_, err = Prepare(logger, tt.path, data, filepath.Join(dir, fmt.Sprintf("run-%d", i)))
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	in := []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: custom-scheduler
clientConnection:
  qps: 50
profiles:
  - schedulerName: custom-scheduler
`)
	out, err := Rewrite(in, "/tmp/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kubescheduler.config.k8s.io/v1
clientConnection:
  kubeconfig: /tmp/kubeconfig
  qps: 50
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
  resourceName: custom-scheduler
profiles:
- schedulerName: custom-scheduler
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("rewritten config (-want +got):\n%s", diff)
	}
	if _, err := Rewrite([]byte("profiles: ["), "k"); err == nil {
		t.Error("malformed YAML: no error")
	}
}

// TestMisspeltPluginConfigRefused: kube-scheduler accepts args for a plugin
// it does not have and runs the one meant with its defaults (NodeLessPod's
// MostPods ran as LeastPods); the playground refuses the file, naming the
// plugin meant.
func TestMisspeltPluginConfigRefused(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	dir := t.TempDir()
	config := configHeader + `profiles:
- schedulerName: custom-scheduler
  plugins: {multiPoint: {enabled: [{name: NodeLessPods}]}}
  pluginConfig:
  - {name: NodeLessPod, args: {mode: MostPods}}
`
	source := writeAcceptedConfig(t, logger, dir, config)
	_, err := Prepare(logger, source, []byte(config), filepath.Join(dir, "run"))
	want := `profiles[0].pluginConfig[0].name: Invalid value: "NodeLessPod": no such plugin; did you mean "NodeLessPods"?`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
}

// TestNotAConfigRefused: a scenario given as --config is named as one, and
// a file without a kind is told what it lacks, instead of the loader's
// error, which quotes the whole file.
func TestNotAConfigRefused(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	tests := []struct{ name, data, want string }{
		{"a scenario", "nodes: [{name: a}]\nobjects: []\n",
			"scheduler config s.yaml is a scenario (it has nodes: and objects:), not a KubeSchedulerConfiguration; pass it as --scenario"},
		{"no kind", "profiles: []\n",
			"scheduler config s.yaml has no kind: a KubeSchedulerConfiguration starts with apiVersion: kubescheduler.config.k8s.io/v1 and kind: KubeSchedulerConfiguration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(logger, "s.yaml", []byte(tc.data), t.TempDir())
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestUnreadArgsRefused: args for a plugin the profile does not enable,
// which kube-scheduler accepts and drops, are refused with the entry's
// path; args for a plugin enabled by default are read.
func TestUnreadArgsRefused(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	dir := t.TempDir()
	config := configHeader + `profiles:
- schedulerName: custom-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NodeLessPods}]
      disabled: [{name: PodTopologySpread}]
  pluginConfig:
  - {name: NodeLessPods, args: {mode: MostPods}}
  - {name: DefaultPreemption, args: {minCandidateNodesAbsolute: 50}}
  - {name: PlacementPolicy, args: {rules: []}}
  - {name: PodTopologySpread, args: {defaultingType: List}}
`
	source := writeAcceptedConfig(t, logger, dir, config)
	_, err := Prepare(logger, source, []byte(config), filepath.Join(dir, "run"))
	const why = "the profile does not enable this plugin at any extension point, so kube-scheduler ignores these args: enable the plugin or remove the entry"
	want := "scheduler config " + source + ": [" +
		`profiles[0].pluginConfig[2].name: Invalid value: "PlacementPolicy": ` + why + ", " +
		`profiles[0].pluginConfig[3].name: Invalid value: "PodTopologySpread": ` + why + "]"
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}

// writeAcceptedConfig writes config to dir/config.yaml and checks that
// kube-scheduler's own loader and validation accept it: the tests that
// use it are about what the playground refuses beyond them.
func writeAcceptedConfig(t *testing.T, logger klog.Logger, dir, config string) string {
	t.Helper()
	source := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(source, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(logger, source)
	if err == nil {
		err = validation.ValidateKubeSchedulerConfiguration(cfg)
	}
	if err != nil {
		t.Fatalf("kube-scheduler refuses the file too (%v): this test's premise is gone", err)
	}
	return source
}
