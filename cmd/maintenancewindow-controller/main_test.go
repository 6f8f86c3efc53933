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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/adminsched/scheduler-plugins/internal/controllerrun"
)

// TestHelp: the root lists run, and run's help names every flag the
// install sets.
func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Available Commands:") || !strings.Contains(stdout.String(), "run ") {
		t.Errorf("no subcommand: exit code %d, stdout %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"run", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run --help: exit code %d: %s", code, stderr.String())
	}
	for _, flag := range []string{"--config", "--profile", "--planned-ahead", "--kubeconfig", "--leader-elect", "--leader-elect-resource-name string",
		`(default "maintenancewindow-controller")`, "--leader-elect-resource-namespace", "--http-address", "--workers", "--secure-port", "-v, --v"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("run --help does not name %s", flag)
		}
	}
	stderr.Reset()
	if code := run([]string{"nosuch"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `unknown command "nosuch"`) {
		t.Errorf("unknown subcommand: exit code %d, stderr %q", code, stderr.String())
	}
}

// TestLoadArgs: the args of the profile that runs the plugin, as written
// and defaulted; several need --profile.
func TestLoadArgs(t *testing.T) {
	args, profile, err := loadArgs("testdata/scheduler-config.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if profile != "custom-scheduler" || args.AnnotationKey != "example.com/window" || args.Horizon.Duration != 6*time.Hour ||
		args.ProviderSignals || args.ProviderWindowDuration.Duration != time.Hour {
		t.Errorf("profile %s args %+v", profile, args)
	}
	args, _, err = loadArgs("testdata/two-profiles.yaml", "a")
	if err != nil || args.Horizon.Duration != 24*time.Hour || args.AnnotationKey != "scheduling.adminsched.io/maintenance-window" {
		t.Errorf("profile a without pluginConfig: %+v, %v; want the defaults", args, err)
	}
	if args, _, err = loadArgs("testdata/two-profiles.yaml", "b"); err != nil || args.Horizon.Duration != 2*time.Hour {
		t.Errorf("profile b: %+v, %v", args, err)
	}
}

// TestRunBadInput: every refusal names the flag, or the file and profile.
// A process applies its logging flags once, so the cases past flag
// parsing call runController, which the command runs after them.
func TestRunBadInput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `required flag(s) "config" not set`) {
		t.Errorf("run without --config: exit code %d, stderr %q", code, stderr.String())
	}
	dir := t.TempDir()
	noArgs := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(noArgs, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	two := "testdata/two-profiles.yaml"
	flags := func(edit func(*runFlags)) runFlags {
		f := runFlags{configFile: two, profile: "a", workers: 1}
		f.leaderElection = leaderElectionDefaults(t)
		edit(&f)
		return f
	}
	negative := -time.Minute
	for _, tt := range []struct {
		name, want string
		flags      runFlags
	}{
		{"no workers", "--workers (0) must be at least 1", flags(func(f *runFlags) { f.workers = 0 })},
		{"negative planned-ahead", "--planned-ahead (-1m0s) must not be negative", flags(func(f *runFlags) { f.plannedAhead = &negative })},
		{"lease shorter than the renew deadline", "--leader-elect-lease-duration (5s) must be longer than --leader-elect-renew-deadline (10s)",
			flags(func(f *runFlags) { f.leaderElection.LeaseDuration = 5 * time.Second })},
		{"no MaintenanceWindow", "scheduler config " + noArgs + ": no profile (s) runs MaintenanceWindow: it has no maintenance windows to write",
			flags(func(f *runFlags) { f.configFile, f.profile = noArgs, "" })},
		{"profile without MaintenanceWindow", "scheduler config " + noArgs + ": profile s does not run MaintenanceWindow",
			flags(func(f *runFlags) { f.configFile, f.profile = noArgs, "s" })},
		{"no such profile", "scheduler config " + two + ": --profile c: no such profile (profiles: a, b)", flags(func(f *runFlags) { f.profile = "c" })},
		{"several profiles", "scheduler config " + two + ": profiles a, b run MaintenanceWindow: name one with --profile", flags(func(f *runFlags) { f.profile = "" })},
		{"missing file", "no such file or directory", flags(func(f *runFlags) { f.configFile = filepath.Join(dir, "nope.yaml") })},
		{"no cluster", "--kubeconfig is empty and this is not a pod of a cluster", flags(func(f *runFlags) { t.Setenv("KUBERNETES_SERVICE_HOST", "") })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := runController(context.Background(), tt.flags)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one that contains %q", err, tt.want)
			}
		})
	}
}

// leaderElectionDefaults is the leader election as parsed with no flag set.
func leaderElectionDefaults(t *testing.T) controllerrun.LeaderElection {
	t.Helper()
	var l controllerrun.LeaderElection
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	l.AddFlags(fs, name)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if l.Name != "maintenancewindow-controller" {
		t.Errorf("Lease %q, want maintenancewindow-controller", l.Name)
	}
	return l
}
