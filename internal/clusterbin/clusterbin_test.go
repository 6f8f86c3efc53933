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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeOptions are Options whose go command is the fake one (see TestMain),
// building into a fresh cache; calls is where the fake records its calls.
func fakeOptions(t *testing.T) (opts Options, calls string, progress *bytes.Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	calls = filepath.Join(t.TempDir(), "calls")
	t.Setenv(fakeCallsEnv, calls)
	progress = &bytes.Buffer{}
	return Options{Progress: progress, CacheDir: t.TempDir(), Go: self}, calls, progress
}

func targetPackages() []string {
	var pkgs []string
	for _, tg := range targets {
		pkgs = append(pkgs, tg.pkg)
	}
	return pkgs
}

// checkComplete checks that dir holds every binary, runnable, and the stamp.
func checkComplete(t *testing.T, dir string) {
	t.Helper()
	for _, tg := range targets {
		out, err := exec.Command(filepath.Join(dir, tg.name)).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v: %s", tg.name, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, stampFile)); err != nil {
		t.Errorf("no stamp after a complete build: %v", err)
	}
}

// checkIncomplete checks that dir does not look like a complete build and
// holds no temporary binary.
func checkIncomplete(t *testing.T, dir string, key string) {
	t.Helper()
	if upToDate(dir, key) {
		t.Error("the directory of an unfinished build looks up to date")
	}
	if _, err := os.Stat(filepath.Join(dir, stampFile)); !os.IsNotExist(err) {
		t.Errorf("stamp after an unfinished build: %v", err)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(tmps) > 0 {
		t.Errorf("temporary binaries left behind: %v", tmps)
	}
}

func embeddedKey(t *testing.T) string {
	t.Helper()
	key, err := embedded.key(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestEnsureBuildsThenReuses: a cold cache is built with the pins'
// versions, whatever GOFLAGS and GOWORK the user has; an up-to-date one is
// reused without running go; a changed stamp or a missing binary is rebuilt.
func TestEnsureBuildsThenReuses(t *testing.T) {
	opts, calls, progress := fakeOptions(t)
	t.Setenv("GOFLAGS", "-modfile=/nonexistent/go.mod -mod=vendor")
	t.Setenv("GOWORK", "/nonexistent/go.work")
	dir, err := Ensure(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(opts.CacheDir, embeddedKey(t)); dir != want {
		t.Errorf("dir %s, want %s", dir, want)
	}
	checkComplete(t, dir)
	got := fakeGoCalls(t, calls)
	if diff := cmp.Diff(targetPackages(), builds(got)); diff != "" {
		t.Errorf("built packages (-want +got):\n%s", diff)
	}
	p, _ := embedded.pins()
	for _, c := range got {
		if !strings.Contains(c, "GOFLAGS=-mod=readonly GOWORK=off") {
			t.Errorf("go ran with the user's GOFLAGS or GOWORK: %s", c)
		}
		if strings.Contains(c, "cmd/kube-") && !strings.Contains(c, "-ldflags -X k8s.io/component-base/version.gitVersion="+p.kubernetes+" -X k8s.io/client-go/pkg/version.gitVersion="+p.kubernetes+" ") {
			t.Errorf("a Kubernetes component built without its version: %s", c)
		}
		if strings.HasSuffix(strings.Fields(c)[len(strings.Fields(c))-1], "module=kwok") != strings.Contains(c, "sigs.k8s.io/kwok") {
			t.Errorf("kwok and only kwok builds in KWOK's module: %s", c)
		}
		if strings.Contains(c, "-mod=mod") != strings.Contains(c, "kube-controller-manager") {
			t.Errorf("only kube-controller-manager's build may add go.sum entries: %s", c)
		}
	}
	for _, want := range []string{"this takes minutes on a cold Go cache, once per playground version", filepath.Join(dir, "build.log"), "with go1.99.0 into " + dir,
		"(1/4) built etcd in ", "s: v3 version fake", "(4/4) built kwok in "} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}

	reuse := opts
	reuse.Go = filepath.Join(t.TempDir(), "no-such-go")
	progress.Reset()
	if again, err := Ensure(context.Background(), reuse); err != nil || again != dir {
		t.Fatalf("up-to-date cache: %q, %v; want %q", again, err, dir)
	}
	if n := len(fakeGoCalls(t, calls)); n != len(got) {
		t.Errorf("an up-to-date cache ran go %d times", n-len(got))
	}
	if progress.Len() != 0 {
		t.Errorf("an up-to-date cache printed %q", progress)
	}

	for name, spoil := range map[string]func() error{
		"stamp of other pins": func() error { return os.WriteFile(filepath.Join(dir, stampFile), []byte("other\n"), 0o644) },
		"binary removed":      func() error { return os.Remove(filepath.Join(dir, "kube-apiserver")) },
	} {
		if err := spoil(); err != nil {
			t.Fatal(err)
		}
		before := len(builds(fakeGoCalls(t, calls)))
		if _, err := Ensure(context.Background(), opts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := len(builds(fakeGoCalls(t, calls))) - before; n != len(targets) {
			t.Errorf("%s: %d builds, want %d", name, n, len(targets))
		}
		checkComplete(t, dir)
	}
}

// TestEnsureFailedBuild: the error names the binary, the log and its end;
// nothing looks complete; the next Ensure builds again.
func TestEnsureFailedBuild(t *testing.T) {
	opts, calls, _ := fakeOptions(t)
	t.Setenv(fakeFailEnv, "k8s.io/kubernetes/cmd/kube-apiserver")
	_, err := Ensure(context.Background(), opts)
	dir := filepath.Join(opts.CacheDir, embeddedKey(t))
	if err == nil {
		t.Fatal("no error from a failed build")
	}
	for _, want := range []string{"building kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver) failed: exit status 1",
		"output is in " + filepath.Join(dir, "build.log"), "k8s.io/kubernetes/cmd/kube-apiserver: fake compile error"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	checkIncomplete(t, dir, embeddedKey(t))
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); !os.IsNotExist(err) {
		t.Errorf("a failed build left its binary: %v", err)
	}

	t.Setenv(fakeFailEnv, "")
	before := len(builds(fakeGoCalls(t, calls)))
	if _, err := Ensure(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if n := len(builds(fakeGoCalls(t, calls))) - before; n != len(targets) {
		t.Errorf("rebuild after a failure: %d builds, want %d", n, len(targets))
	}
	checkComplete(t, dir)
}

// TestEnsureRefusesMovedRequirements: kube-controller-manager's -mod=mod
// build may add go.sum entries, not change go.mod.
func TestEnsureRefusesMovedRequirements(t *testing.T) {
	opts, _, _ := fakeOptions(t)
	t.Setenv(fakeMoveEnv, "1")
	_, err := Ensure(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "building kube-controller-manager") || !strings.Contains(err.Error(), "changed the requirements of go.mod") {
		t.Fatalf("got %v, want kube-controller-manager refused for a changed go.mod", err)
	}
	dir := filepath.Join(opts.CacheDir, embeddedKey(t))
	checkIncomplete(t, dir, embeddedKey(t))
	if _, err := os.Stat(filepath.Join(dir, "kube-controller-manager")); !os.IsNotExist(err) {
		t.Errorf("the refused binary is there: %v", err)
	}
}

// cancelOn cancels a context when a line it is written holds a string.
type cancelOn struct {
	cancel func()
	when   string
}

func (c cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.when)) {
		c.cancel()
	}
	return len(p), nil
}

// TestEnsureInterrupted: a build cancelled after its first binary leaves no
// stamp, and the next Ensure builds everything.
func TestEnsureInterrupted(t *testing.T) {
	opts, calls, _ := fakeOptions(t)
	t.Setenv(fakeDelayEnv, "200ms")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.Progress = cancelOn{cancel: cancel, when: "(1/4)"}
	if _, err := Ensure(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	dir := filepath.Join(opts.CacheDir, embeddedKey(t))
	checkIncomplete(t, dir, embeddedKey(t))

	opts.Progress = nil
	before := len(builds(fakeGoCalls(t, calls)))
	if _, err := Ensure(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if n := len(builds(fakeGoCalls(t, calls))) - before; n != len(targets) {
		t.Errorf("after an interrupted build: %d builds, want %d", n, len(targets))
	}
	checkComplete(t, dir)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// TestEnsureConcurrent: playgrounds started together build once; the others
// say they wait.
func TestEnsureConcurrent(t *testing.T) {
	opts, calls, _ := fakeOptions(t)
	t.Setenv(fakeDelayEnv, "100ms")
	const n = 3
	var wg sync.WaitGroup
	dirs, errs := make([]string, n), make([]error, n)
	var progress syncBuffer
	for i := range n {
		wg.Go(func() {
			o := opts
			o.Progress = &progress
			dirs[i], errs[i] = Ensure(context.Background(), o)
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("Ensure %d: %q, %v; want %q", i, dirs[i], errs[i], dirs[0])
		}
	}
	if diff := cmp.Diff(targetPackages(), builds(fakeGoCalls(t, calls))); diff != "" {
		t.Errorf("%d concurrent Ensure calls built (-once +got):\n%s", n, diff)
	}
	if !strings.Contains(progress.buf.String(), "waiting for another playground that is building the control plane into "+dirs[0]) {
		t.Errorf("no Ensure said it waited:\n%s", progress.buf.String())
	}
	checkComplete(t, dirs[0])
}

// TestEnsureNoGo: without a go command the error says why the playground
// needs one, which version, and how to do without.
func TestEnsureNoGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	m := embedded
	m.kwokMod = []byte("module x\n\ngo 1.27.3\n\nrequire sigs.k8s.io/kwok v0.9.1\n")
	_, err := ensure(context.Background(), Options{CacheDir: t.TempDir()}, m)
	if !errors.Is(err, ErrNoGo) {
		t.Fatalf("got %v, want ErrNoGo", err)
	}
	for _, want := range []string{"no go command", `"go": executable file not found in $PATH`,
		"the playground builds its control plane (etcd, kube-apiserver, kube-controller-manager, kwok) with the Go toolchain",
		"install Go 1.27.3 or later", "--assets DIR or $KUBEBUILDER_ASSETS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestEnsureCacheDirCannotBeCreated: the error names the directory and
// how to do without it.
func TestEnsureCacheDirCannotBeCreated(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(file, "cache")
	_, err := Ensure(context.Background(), Options{CacheDir: cache})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"cannot create the cache directory " + cache, "not a directory", "--assets DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
