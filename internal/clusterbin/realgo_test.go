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

package clusterbin

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realBuildEnv opts into TestRealBuild, which builds the four binaries with
// the real toolchain (see its comment for what it costs).
const realBuildEnv = "CLUSTERBIN_REAL_BUILD"

// TestRealBuildPlan runs the real go command on the embedded modules with
// each target's build arguments and -n (print the commands, run none): it
// proves that the pins resolve and that every target's package loads from
// them, go.sum included, in the way Ensure builds it, at the cost of
// loading the packages.
func TestRealBuildPlan(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test needs the go command: %v", err)
	}
	mainDir, kwokDir, err := embedded.write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := embedded.pins()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		dir := mainDir
		if tg.kwokModule {
			dir = kwokDir
		}
		args := tg.buildArgs(filepath.Join(t.TempDir(), tg.name), p.kubernetes)
		args = append([]string{args[0], "-n"}, args[1:]...)
		cmd := exec.Command(goCmd, args...)
		cmd.Dir, cmd.Env = dir, goEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			continue
		}
		// -n prints the link step of the binary last.
		if !strings.Contains(stderr.String(), "/link ") && !strings.Contains(stderr.String(), "tool link") {
			t.Errorf("go %s planned no link:\n%s", strings.Join(args, " "), lastLines(stderr.String(), 5))
		}
	}
	if got, _ := os.ReadFile(filepath.Join(mainDir, "go.mod")); !bytes.Equal(got, embedded.mainMod) {
		t.Error("planning kube-controller-manager's build changed go.mod's requirements")
	}
}

// TestRealBuild builds the control plane with the real toolchain, as a
// playground without a checkout does, and checks what each binary says its
// version is. Opt-in (CLUSTERBIN_REAL_BUILD=1): with the Go build cache
// warm from make envtest it links four large binaries, which took SECONDS
// here on 2 cores; cold, it compiles them (about 10 minutes).
func TestRealBuild(t *testing.T) {
	if os.Getenv(realBuildEnv) == "" {
		t.Skipf("set %s=1 to build the control plane with the real toolchain", realBuildEnv)
	}
	var progress bytes.Buffer
	dir, err := Ensure(context.Background(), Options{Progress: &progress, CacheDir: t.TempDir()})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := embedded.pins()
	for name, want := range map[string]string{
		"etcd":                    "etcd Version: " + strings.TrimPrefix(p.etcd, "v"),
		"kube-apiserver":          "Kubernetes " + p.kubernetes,
		"kube-controller-manager": "Kubernetes " + p.kubernetes,
		"kwok":                    p.kwok,
	} {
		out, err := exec.Command(filepath.Join(dir, name), "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s --version: %v, %q; want it to say %q", name, err, out, want)
		}
	}
	if !upToDate(dir, embeddedKey(t)) {
		t.Error("the built directory is not up to date")
	}
}
