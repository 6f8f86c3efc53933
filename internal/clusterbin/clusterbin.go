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

// Package clusterbin gives the playground its control plane without a
// checkout: etcd, kube-apiserver, kube-controller-manager and KWOK, built
// with the Go toolchain into the user's cache directory from exactly the
// module versions this playground pins (its embedded go.mod and go.sum, and
// an embedded copy of hack/tools/kwok's). A directory is named by what its
// binaries are built from, so a playground with other pins gets a new one; a
// stamp, written last, marks a complete build, which later runs reuse without
// running the go command. hack/install-envtest.sh builds the same four
// targets into bin/ for a checkout.
//
// The directory holds no Karpenter: a playground run with --karpenter and
// this directory as its assets fails with karpenter.CheckAssets' error, which
// names what is missing.
package clusterbin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	schedulerplugins "github.com/adminsched/scheduler-plugins"
)

// KWOK's module definition, a copy of hack/tools/kwok/go.mod and go.sum (a
// directory holding a file named go.mod cannot be embedded); a test keeps
// them equal.
var (
	//go:embed kwok.mod
	kwokMod []byte
	//go:embed kwok.sum
	kwokSum []byte
)

// embedded are the modules this playground was built with.
var embedded = modules{mainMod: schedulerplugins.GoMod, mainSum: schedulerplugins.GoSum, kwokMod: kwokMod, kwokSum: kwokSum}

// CacheSubdir is the folder under os.UserCacheDir that Ensure uses by default.
const CacheSubdir = "adminsched-playground"

// ErrNoGo is wrapped by Ensure's error when there is no go command to build with.
var ErrNoGo = errors.New("no go command")

// Options tell Ensure where to build and with what.
type Options struct {
	// Progress receives one line when a build starts and one per binary
	// built; nil discards them.
	Progress io.Writer
	// CacheDir holds one directory per set of pins; empty means
	// os.UserCacheDir()/adminsched-playground.
	CacheDir string
	// Go is the go command, a name looked up in PATH or a path; empty
	// means "go".
	Go string
}

// Ensure returns a directory holding etcd, kube-apiserver,
// kube-controller-manager and kwok built from this playground's pins for
// this machine's GOOS/GOARCH, building them first if no complete build is
// there (minutes on a cold Go cache). Playgrounds
// started together build once: the others wait for the first. The go
// command's output goes to build.log in that directory; a failed build's
// error names the binary and ends with the log's last lines.
func Ensure(ctx context.Context, opts Options) (string, error) {
	return ensure(ctx, opts, embedded)
}

func ensure(ctx context.Context, opts Options, m modules) (string, error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Go == "" {
		opts.Go = "go"
	}
	cache, err := cacheDir(opts.CacheDir)
	if err != nil {
		return "", err
	}
	key, err := m.key(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, key)
	if upToDate(dir, key) {
		return dir, nil
	}
	goCmd, err := exec.LookPath(opts.Go)
	if err != nil {
		p, _ := m.pins()
		return "", fmt.Errorf("%w (%v): the playground builds its control plane (%s) with the Go toolchain, once per playground version: install Go %s or later (https://go.dev/dl/) and put it on PATH, or skip the build with --assets DIR or $KUBEBUILDER_ASSETS naming a directory that holds these binaries (make envtest builds them in a checkout)",
			ErrNoGo, err, strings.Join(targetNames(), ", "), p.minGo)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", cacheDirError(dir, err)
	}
	unlock, err := lock(ctx, filepath.Join(dir, ".lock"), func() {
		fmt.Fprintf(opts.Progress, "waiting for another playground that is building the control plane into %s\n", dir)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	// The playground we waited for may have built it.
	if upToDate(dir, key) {
		return dir, nil
	}
	b := &builder{goCmd: goCmd, dir: dir, key: key, modules: m, progress: opts.Progress}
	if err := b.build(ctx); err != nil {
		return "", err
	}
	return dir, nil
}

func cacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory to build the control plane into (%v): set $XDG_CACHE_HOME or $HOME, or pass --assets DIR or $KUBEBUILDER_ASSETS naming a directory that holds %s", err, strings.Join(targetNames(), ", "))
		}
		dir = filepath.Join(base, CacheSubdir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", cacheDirError(dir, err)
	}
	return filepath.Abs(dir)
}

func cacheDirError(dir string, err error) error {
	return fmt.Errorf("cannot create the cache directory %s that the control plane is built into: %w; free or fix it, set $XDG_CACHE_HOME to another place, or pass --assets DIR or $KUBEBUILDER_ASSETS naming a directory that holds %s", dir, err, strings.Join(targetNames(), ", "))
}

// stampFile marks a complete build; its first line is the directory's key.
const stampFile = ".stamp"

// upToDate reports whether dir holds a complete build for key: the stamp,
// written after every binary, and every binary, executable.
func upToDate(dir, key string) bool {
	data, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil {
		return false
	}
	if first, _, _ := strings.Cut(string(data), "\n"); first != key {
		return false
	}
	for _, t := range targets {
		st, err := os.Stat(filepath.Join(dir, t.name))
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
