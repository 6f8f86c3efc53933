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
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// target is one binary and how hack/install-envtest.sh builds it.
type target struct {
	name, pkg string
	// kwokModule: built in KWOK's module, not the playground's.
	kwokModule bool
	// versionLdflags: Kubernetes components, whose --version says
	// v0.0.0-master unless the version is set at link time.
	versionLdflags bool
	// addSums: kube-controller-manager needs go.sum entries for modules
	// nothing in the playground imports (the kubelet's, through the volume
	// controllers), so its build may add them (-mod=mod); the requirements
	// must stay as they are.
	addSums bool
}

var targets = []target{
	{name: "etcd", pkg: "go.etcd.io/etcd/server/v3"},
	{name: "kube-apiserver", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", versionLdflags: true},
	{name: "kube-controller-manager", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", versionLdflags: true, addSums: true},
	{name: "kwok", pkg: "sigs.k8s.io/kwok/cmd/kwok", kwokModule: true},
}

func targetNames() []string {
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.name
	}
	return names
}

// buildArgs are the go command's arguments that build t into out.
func (t target) buildArgs(out, kubernetesVersion string) []string {
	args := []string{"build", "-o", out}
	if t.addSums {
		args = append(args, "-mod=mod")
	}
	if t.versionLdflags {
		args = append(args, "-ldflags", "-X k8s.io/component-base/version.gitVersion="+kubernetesVersion+
			" -X k8s.io/client-go/pkg/version.gitVersion="+kubernetesVersion)
	}
	return append(args, t.pkg)
}

// goEnv is the environment of every go command the build runs: the user's,
// with the settings that would build something else than the pins made
// neutral. A non-empty GOFLAGS also overrides one set with go env -w
// (-modfile, -mod=vendor, tags); the flags a build needs are on its command
// line. GOOS/GOARCH are this machine's: the binaries run here.
func goEnv() []string {
	return append(os.Environ(), goEnvOverrides()...)
}

func goEnvOverrides() []string {
	return []string{"GOWORK=off", "GOFLAGS=-mod=readonly", "GO111MODULE=on", "GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH}
}

type builder struct {
	goCmd, dir, key string
	modules         modules
	progress        io.Writer
	log             *os.File
}

// build builds every target into b.dir: each into a temporary file renamed
// once it has run --version, and the stamp last, so that an interrupted or
// failed build leaves no directory that looks complete.
func (b *builder) build(ctx context.Context) (err error) {
	if err := os.Remove(filepath.Join(b.dir, stampFile)); err != nil && !os.IsNotExist(err) {
		return cacheDirError(b.dir, err)
	}
	logPath := filepath.Join(b.dir, "build.log")
	if b.log, err = os.Create(logPath); err != nil {
		return cacheDirError(b.dir, err)
	}
	defer func() {
		if cerr := b.log.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	work, err := os.MkdirTemp(b.dir, ".modules-")
	if err != nil {
		return cacheDirError(b.dir, err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	mainDir, kwokDir, err := b.modules.write(work)
	if err != nil {
		return cacheDirError(b.dir, err)
	}
	p, err := b.modules.pins()
	if err != nil {
		return err
	}
	fmt.Fprintf(b.log, "# every command runs with the user's environment and %s\n", strings.Join(goEnvOverrides(), " "))
	goVersion, err := b.run(ctx, mainDir, b.goCmd, "env", "GOVERSION")
	if err != nil {
		return fmt.Errorf("%s cannot build the playground's modules (they need Go %s or later): %w%s", b.goCmd, p.minGo, err, tail(logPath))
	}
	goVersion = strings.TrimSpace(goVersion)
	fmt.Fprintf(b.progress, "building the control plane (%s) with %s into %s: this takes minutes on a cold Go cache, once per playground version; the go command's output goes to %s\n",
		strings.Join(targetNames(), ", "), goVersion, b.dir, logPath)
	for i, t := range targets {
		start := time.Now()
		modDir := mainDir
		if t.kwokModule {
			modDir = kwokDir
		}
		version, err := b.buildOne(ctx, t, modDir, p.kubernetes)
		if err != nil {
			return fmt.Errorf("building %s (%s) failed: %w; the go command's output is in %s, ending with:%s", t.name, t.pkg, err, logPath, tail(logPath))
		}
		fmt.Fprintf(b.progress, "(%d/%d) built %s in %.0f s: %s\n", i+1, len(targets), t.name, time.Since(start).Seconds(), version)
	}
	return writeFileAtomic(filepath.Join(b.dir, stampFile), []byte(b.key+"\nbuilt with "+goVersion+"\n"))
}

// buildOne builds t and returns the first line its --version prints.
func (b *builder) buildOne(ctx context.Context, t target, modDir, kubernetesVersion string) (string, error) {
	tmp := filepath.Join(b.dir, "."+t.name+".tmp")
	defer func() { _ = os.Remove(tmp) }()
	if _, err := b.run(ctx, modDir, b.goCmd, t.buildArgs(tmp, kubernetesVersion)...); err != nil {
		return "", err
	}
	if t.addSums {
		// -mod=mod may only add go.sum entries: a changed requirement
		// would mean the binary was not built from the pins.
		got, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
		if err != nil {
			return "", err
		}
		if !bytes.Equal(got, b.modules.mainMod) {
			fmt.Fprintf(b.log, "go.mod after the build:\n%s\n", got)
			return "", fmt.Errorf("the build changed the requirements of go.mod; refusing the binary")
		}
	}
	out, err := b.run(ctx, modDir, tmp, "--version")
	if err != nil {
		return "", fmt.Errorf("the built binary does not run: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(b.dir, t.name)); err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return first, nil
}

// run runs a command in dir, its output appended to the build log, and
// returns its standard output.
func (b *builder) run(ctx context.Context, dir, name string, args ...string) (string, error) {
	fmt.Fprintf(b.log, "$ cd %s && %s %s\n", dir, name, strings.Join(args, " "))
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	cmd.Stdout = io.MultiWriter(&stdout, b.log)
	cmd.Stderr = b.log
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return "", err
	}
	return stdout.String(), nil
}

// write lays out the two modules under dir, each holding only its go.mod
// and go.sum: the targets are packages of their dependencies.
func (m modules) write(dir string) (mainDir, kwokDir string, err error) {
	mainDir, kwokDir = filepath.Join(dir, "main"), filepath.Join(dir, "kwok")
	for _, f := range []struct {
		dir      string
		mod, sum []byte
	}{{mainDir, m.mainMod, m.mainSum}, {kwokDir, m.kwokMod, m.kwokSum}} {
		if err := os.Mkdir(f.dir, 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(f.dir, "go.mod"), f.mod, 0o644); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(f.dir, "go.sum"), f.sum, 0o644); err != nil {
			return "", "", err
		}
	}
	return mainDir, kwokDir, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// tail is the end of a log, for an error message.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return " (" + err.Error() + ")"
	}
	return "\n  " + strings.ReplaceAll(lastLines(string(data), 15), "\n", "\n  ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
