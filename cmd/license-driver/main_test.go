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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/component-base/version"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver/node"
)

// runMainEnv makes the test binary run main() instead of the tests, so that
// a test sees the command as a user does: exit code, stdout and stderr
// (cli.Run exits, --version exits, the logging options apply once per
// process).
const runMainEnv = "LICENSE_DRIVER_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0) // main exits itself; this is not reached
	}
	os.Exit(m.Run())
}

// runCommand runs the command with args in a child process.
func runCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

const staticConfig = `apiVersion: licenses.adminsched.io/v1alpha1
kind: LicenseDriverConfiguration
source:
  static: {}
features:
- name: MATLAB
  seats: %SEATS%
`

const featuresOnlyConfig = `apiVersion: licenses.adminsched.io/v1alpha1
kind: LicenseDriverConfiguration
features:
- name: MATLAB
  env: {LM_LICENSE_FILE: 27000@licsrv.example.com}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unreachableKubeconfig points at a port nothing listens on: building the
// client works, any request fails.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`

// TestCommand runs the binary's command tree as a user does: what each
// mistake says, and that it is an error (exit code 1).
func TestCommand(t *testing.T) {
	good := writeFile(t, "good.yaml", strings.ReplaceAll(staticConfig, "%SEATS%", "3"))
	bad := writeFile(t, "bad.yaml", strings.ReplaceAll(staticConfig, "%SEATS%", "-1"))
	missing := filepath.Join(t.TempDir(), "no-such-config.yaml")
	kubeconfig := writeFile(t, "kubeconfig", unreachableKubeconfig)
	// The kubelet plugin's configuration as the manifests give it: no
	// source, no seats.
	featuresOnly := writeFile(t, "features-only.yaml", featuresOnlyConfig)
	badFeature := writeFile(t, "bad-feature.yaml", strings.ReplaceAll(featuresOnlyConfig, "LM_LICENSE_FILE", "LM-LICENSE-FILE"))
	withSource := writeFile(t, "with-source.yaml", strings.ReplaceAll(strings.ReplaceAll(staticConfig, "static: {}", "http: {url: \"https://reader:s3cret@licstat.example.com/f.json\"}"), "seats: %SEATS%", "seats: 3"))
	for _, tc := range []struct {
		name string
		args []string
		code int
		// stdout and stderr must hold each of these.
		stdout, stderr []string
		// stderr must hold none of these.
		notStderr []string
	}{
		{
			name:   "no subcommand prints the help",
			stdout: []string{"controller", "kubelet-plugin", "licenses.adminsched.io/<pool>"},
		},
		{
			name: "controller help",
			args: []string{"controller", "--help"},
			stdout: []string{"--config", "--leader-elect", "--leader-elect-lease-duration", "--leader-elect-resource-namespace", "--http-address",
				"--secure-port", "--bind-address", "--authentication-kubeconfig", "--authorization-kubeconfig", "--tls-cert-file"},
		},
		{
			name:   "kubelet-plugin help",
			args:   []string{"kubelet-plugin", "--help"},
			stdout: []string{"--config", "--node-name", "--plugin-data-dir", "--registrar-dir", "--cdi-dir", "--health-address"},
		},
		{
			name:   "unknown subcommand",
			args:   []string{"nosuch"},
			code:   1,
			stderr: []string{`unknown command "nosuch" for "license-driver"`},
		},
		{
			name:   "controller without --config",
			args:   []string{"controller"},
			code:   1,
			stderr: []string{`required flag(s) \"config\" not set`},
		},
		{
			name:   "kubelet-plugin without --config",
			args:   []string{"kubelet-plugin"},
			code:   1,
			stderr: []string{`required flag(s) \"config\" not set`},
		},
		{
			name:   "unknown flag",
			args:   []string{"controller", "--config=" + good, "--leader-elect-lease=1s"},
			code:   1,
			stderr: []string{"unknown flag: --leader-elect-lease"},
		},
		{
			name:   "controller takes no arguments",
			args:   []string{"controller", "--config=" + good, "extra"},
			code:   1,
			stderr: []string{`unknown command "extra" for "license-driver controller"`},
		},
		{
			name:   "controller: missing config file",
			args:   []string{"controller", "--config=" + missing},
			code:   1,
			stderr: []string{"license driver configuration", "--config", missing, "no such file or directory"},
		},
		{
			name:   "kubelet-plugin: missing config file",
			args:   []string{"kubelet-plugin", "--config=" + missing},
			code:   1,
			stderr: []string{"license driver configuration", "--config", missing, "no such file or directory"},
		},
		{
			name:   "controller: bad config names the field",
			args:   []string{"controller", "--config=" + bad},
			code:   1,
			stderr: []string{bad, "features[0].seats: Invalid value: -1: must be between 0 and "},
		},
		{
			name:   "kubelet-plugin: bad config names the field",
			args:   []string{"kubelet-plugin", "--config=" + bad},
			code:   1,
			stderr: []string{bad, "features[0].seats: Invalid value: -1: must be between 0 and "},
		},
		{
			name:      "kubelet-plugin: a configuration of features only",
			args:      []string{"kubelet-plugin", "--config=" + featuresOnly, "--kubeconfig=" + kubeconfig, "--registrar-dir=" + missing},
			code:      1,
			stderr:    []string{"--registrar-dir", missing, "no such file or directory"},
			notStderr: []string{"license driver configuration", "license source"},
		},
		{
			name:   "kubelet-plugin: a bad feature names the field",
			args:   []string{"kubelet-plugin", "--config=" + badFeature},
			code:   1,
			stderr: []string{"license driver configuration", badFeature, `features[0].env[LM-LICENSE-FILE]: Invalid value: \"LM-LICENSE-FILE\"`},
		},
		{
			name:   "controller: a configuration of features only lacks a source",
			args:   []string{"controller", "--config=" + featuresOnly},
			code:   1,
			stderr: []string{featuresOnly, "source: Invalid value: 0: exactly one of static, lmstat and http must be set"},
		},
		{
			name:   "controller: missing kubeconfig",
			args:   []string{"controller", "--config=" + good, "--kubeconfig=" + missing},
			code:   1,
			stderr: []string{"kubeconfig", missing},
		},
		{
			name:   "controller: bad --http-address",
			args:   []string{"controller", "--config=" + good, "--kubeconfig=" + kubeconfig, "--http-address=127.0.0.1:99999"},
			code:   1,
			stderr: []string{"--http-address", "99999"},
		},
		{
			name:   "controller: lease shorter than the renew deadline",
			args:   []string{"controller", "--config=" + good, "--kubeconfig=" + kubeconfig, "--leader-elect-lease-duration=1s", "--leader-elect-renew-deadline=2s"},
			code:   1,
			stderr: []string{"--leader-elect-lease-duration (1s) must be longer than --leader-elect-renew-deadline (2s)"},
		},
		{
			name:   "controller: renew deadline within the retry period",
			args:   []string{"controller", "--config=" + good, "--kubeconfig=" + kubeconfig, "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=2s"},
			code:   1,
			stderr: []string{"--leader-elect-renew-deadline (2s) must be longer than 1.2 times --leader-elect-retry-period (2s)"},
		},
		{
			name:   "controller: no retry period",
			args:   []string{"controller", "--config=" + good, "--kubeconfig=" + kubeconfig, "--leader-elect-retry-period=0s"},
			code:   1,
			stderr: []string{"--leader-elect-retry-period (0s) must be positive"},
		},
		{
			name:   "controller: leader election flags are not checked without it",
			args:   []string{"controller", "--config=" + missing, "--leader-elect=false", "--leader-elect-retry-period=0s"},
			code:   1,
			stderr: []string{"license driver configuration"},
		},
		{
			name:   "kubelet-plugin: relative --cdi-dir",
			args:   []string{"kubelet-plugin", "--config=" + good, "--kubeconfig=" + kubeconfig, "--cdi-dir=var/run/cdi"},
			code:   1,
			stderr: []string{`--cdi-dir \"var/run/cdi\": must be an absolute path`},
		},
		{
			name:      "kubelet-plugin: missing --registrar-dir",
			args:      []string{"kubelet-plugin", "--config=" + good, "--kubeconfig=" + kubeconfig, "--registrar-dir=" + missing},
			code:      1,
			stderr:    []string{"--registrar-dir", missing, "no such file or directory"},
			notStderr: []string{"license source"}, // the static source is no license server
		},
		{
			name:      "kubelet-plugin: a configuration with a license source",
			args:      []string{"kubelet-plugin", "--config=" + withSource, "--kubeconfig=" + kubeconfig, "--registrar-dir=" + missing},
			code:      1,
			stderr:    []string{"the configuration holds a license source, which the kubelet plugin does not read", `source="http"`},
			notStderr: []string{"s3cret"},
		},
		{
			name:   "kubelet-plugin: bad --health-address",
			args:   []string{"kubelet-plugin", "--config=" + good, "--kubeconfig=" + kubeconfig, "--registrar-dir=" + t.TempDir(), "--health-address=127.0.0.1:99999"},
			code:   1,
			stderr: []string{"--health-address", "99999"},
		},
		{
			name:   "controller: bad --secure-port",
			args:   []string{"controller", "--config=" + good, "--kubeconfig=" + kubeconfig, "--secure-port=99999"},
			code:   1,
			stderr: []string{"--secure-port", "99999"},
		},
		{
			name:   "version",
			args:   []string{"--version"},
			stdout: []string{version.Get().GitVersion},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCommand(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout does not hold %q:\n%s", want, stdout)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not hold %q:\n%s", want, stderr)
				}
			}
			for _, deny := range tc.notStderr {
				if strings.Contains(stderr, deny) {
					t.Errorf("stderr holds %q:\n%s", deny, stderr)
				}
			}
		})
	}
}

// TestCommandTree checks the subcommands and their flags' defaults, which
// the manifests and the chart rely on.
func TestCommandTree(t *testing.T) {
	root := newCommand()
	var names []string
	flags := map[string]map[string]string{}
	for _, c := range root.Commands() {
		names = append(names, c.Name())
		flags[c.Name()] = map[string]string{}
		for _, name := range []string{"config", "kubeconfig", "leader-elect", "leader-elect-resource-namespace", "leader-elect-resource-name",
			"leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period", "http-address",
			"secure-port", "authentication-skip-lookup", "authorization-always-allow-paths",
			"plugin-data-dir", "registrar-dir", "cdi-dir", "health-address"} {
			if f := c.Flags().Lookup(name); f != nil {
				flags[c.Name()][name] = f.DefValue
			}
		}
		if ann := c.Flags().Lookup("config").Annotations; len(ann[cobra.BashCompOneRequiredFlag]) == 0 {
			t.Errorf("%s: --config is not marked required", c.Name())
		}
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"controller", "kubelet-plugin"}, names); diff != "" {
		t.Errorf("subcommands (-want, +got):\n%s", diff)
	}
	want := map[string]map[string]string{
		"controller": {
			"config":                          "",
			"kubeconfig":                      "",
			"leader-elect":                    "true",
			"leader-elect-resource-namespace": "",
			"leader-elect-resource-name":      "license-driver",
			"leader-elect-lease-duration":     "15s",
			"leader-elect-renew-deadline":     "10s",
			"leader-elect-retry-period":       "2s",
			"http-address":                    "127.0.0.1:8080",
			// Off unless asked (the manifests ask); bearer tokens only.
			"secure-port":                      "0",
			"authentication-skip-lookup":       "true",
			"authorization-always-allow-paths": "[/healthz,/readyz,/livez]",
		},
		"kubelet-plugin": {
			"config":          "",
			"kubeconfig":      "",
			"plugin-data-dir": node.DefaultPluginDataDir,
			"registrar-dir":   node.DefaultRegistrarDir,
			"cdi-dir":         node.DefaultCDIDir,
			"health-address":  "",
		},
	}
	if diff := cmp.Diff(want, flags); diff != "" {
		t.Errorf("flag defaults (-want, +got):\n%s", diff)
	}
	for _, name := range []string{"version", "v", "logging-format"} {
		if root.PersistentFlags().Lookup(name) == nil {
			t.Errorf("the root command has no --%s", name)
		}
	}
}
