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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adminsched/scheduler-plugins/internal/localcluster"
)

// TestAssetsNextToBinary runs a clone's bin/playground, reached through a
// link, from another folder with no --assets and no $KUBEBUILDER_ASSETS,
// as `/path/to/clone/bin/playground` typed anywhere: it runs the control
// plane of that bin/ (here links to the test's binaries). It built into
// the user's cache instead (here: a build that fails at once, with no go
// command on PATH). A relative --config or --scenario not found there
// names the clone's file of that path, or where the clone keeps them.
func TestAssetsNextToBinary(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test builds the playground: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	clone := fakeClone(t)
	bin := filepath.Join(clone, "bin")
	// The playground of this test's minor: another minor's would wait for
	// informers of APIs the cluster does not serve.
	build := exec.CommandContext(ctx, goCmd, append(append([]string{"build"}, minorBuildFlags()...), "-o", filepath.Join(bin, "playground"), ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	link := filepath.Join(t.TempDir(), "playground")
	if err := os.Symlink(filepath.Join(bin, "playground"), link); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	code, stdout, stderr := runElsewhere(t, ctx, link, work, "-o", "json")
	if code != exitOK {
		t.Fatalf("exit code %d, want 0", code)
	}
	if want := "starting the control plane (etcd, kube-apiserver, kube-controller-manager, kwok) from " + bin + "\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q", want)
	}
	if r := decodeResult(t, stdout); len(r.Pods) != 7 || len(r.Nodes) != 3 {
		t.Errorf("%d pods on %d nodes, want the tutorial's 7 on 3", len(r.Pods), len(r.Nodes))
	}

	// Without the binaries, its bin/ is named with ./bin before the build.
	bare := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "cp", filepath.Join(bin, "playground"), bare).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	code, _, stderr = runElsewhere(t, ctx, filepath.Join(bare, "playground"), work)
	if want := "playground: no --assets given, $KUBEBUILDER_ASSETS is not set and neither " + bare +
		" (the playground's directory) nor ./bin holds the control plane's binaries: building them: no go command"; code != exitFailure || !strings.HasPrefix(stderr, want) {
		t.Errorf("without binaries in its bin/: exit code %d, want %d and stderr starting with\n%s", code, exitFailure, want)
	}

	notThere := "no such file or directory (relative to the working directory " + work + "); the clone of this playground has "
	for _, tt := range []struct{ flag, path, want string }{
		{"--config", "manifests/nodelesspods/scheduler-config.yaml", notThere + filepath.Join(clone, "manifests/nodelesspods/scheduler-config.yaml") + "\n"},
		{"--config", "manifests/nope.yaml", notThere + "its scheduler configs in " + filepath.Join(clone, "manifests") + " and " + filepath.Join(clone, "examples/scenarios") + "\n"},
		{"--scenario", "examples/scenarios/nope.yaml", notThere + "its scenarios in " + filepath.Join(clone, "examples/scenarios") + "\n"},
	} {
		code, _, stderr := runElsewhere(t, ctx, link, work, tt.flag, tt.path)
		if code != exitInput || !strings.Contains(stderr, "open "+tt.path+": "+tt.want) {
			t.Errorf("%s %s: exit code %d, want %d and stderr saying\n%s", tt.flag, tt.path, code, exitInput, tt.want)
		}
	}
}

// fakeClone is a folder laid out as a clone: bin/ holding links to the
// test's control plane binaries, examples/scenarios/ and the shipped
// scheduler config.
func fakeClone(t *testing.T) string {
	t.Helper()
	clone := t.TempDir()
	abs, err := filepath.Abs(assets)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"bin", "examples/scenarios", "manifests/nodelesspods"} {
		if err := os.MkdirAll(filepath.Join(clone, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range localcluster.Binaries {
		if err := os.Symlink(filepath.Join(abs, name), filepath.Join(clone, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "manifests/nodelesspods/scheduler-config.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return clone
}

// runElsewhere runs the playground bin in dir with no $KUBEBUILDER_ASSETS,
// a cache of its own and no go command on PATH, and returns its exit code,
// stdout and stderr.
func runElsewhere(t *testing.T, ctx context.Context, bin, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir()}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("playground %s in %s: %v\nstderr:\n%s", strings.Join(args, " "), dir, err, stderr.String())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatal(err)
	return 0, "", ""
}
