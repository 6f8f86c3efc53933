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
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

const modulePath = "github.com/adminsched/scheduler-plugins"

// TestGoInstall installs the playground as a user would from the module
// proxy, `go install github.com/adminsched/scheduler-plugins/cmd/playground@version`,
// from a proxy (a file:// GOPROXY ahead of the real one) that serves this
// working tree as that version's module zip, made the way the go command
// makes it (golang.org/x/mod/zip: submodules such as hack/tools/* left out).
// go install refuses a module whose go.mod has a replace directive, and
// the zip holds only what the module ships, so the installed binary must
// run from a folder of its own with what it embeds.
func TestGoInstall(t *testing.T) {
	if minorBuildFlags() != nil {
		// go install ...@version builds with go.mod only: the newest
		// minor's playground, which waits for ever for informers of APIs
		// this minor's cluster does not serve.
		t.Skipf("go install builds the playground of go.mod's minor, not this build's %s", kubeversion.String())
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test runs the go command: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// A version no release will have, new in every run: the module cache
	// keeps what it extracted by version, and would serve an older run's.
	version := fmt.Sprintf("v0.37.2-goinstall.test.%d", time.Now().UnixNano())
	dropFromModuleCache(t, goCmd, version)
	proxy := t.TempDir()
	writeModuleProxy(t, root, proxy, version)

	upstream := strings.TrimSpace(goEnv(t, goCmd, "GOPROXY"))
	gobin, work := t.TempDir(), t.TempDir()
	env := append(cleanGoEnv(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+upstream,
		// The test's zip has no checksum in the public database.
		"GONOSUMDB="+modulePath,
		"GOBIN="+gobin,
		"GOWORK=off",
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	install := exec.CommandContext(ctx, goCmd, "install", modulePath+"/cmd/playground@"+version)
	install.Dir, install.Env = work, env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ...@%s: %v\n%s", version, err, out)
	}
	t.Logf("go install took %v", time.Since(start).Round(time.Second))
	bin := filepath.Join(gobin, "playground")

	// The version is the module's, read from the build info.
	out := runInstalled(t, ctx, bin, work, "version", "-o", "json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("playground version -o json: %v\n%s", err, out)
	}
	if !strings.Contains(out, version) || !strings.Contains(out, "v1.37.2") {
		t.Errorf("playground version -o json = %s, want the module version %s and Kubernetes v1.37.2", out, version)
	}

	// The built-in tutorial from a folder with nothing in it. The control
	// plane comes from the test's assets: building it into the user's
	// cache is internal/clusterbin's TestRealBuild.
	out = runInstalled(t, ctx, bin, work, "-o", "json")
	var r report.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("playground -o json: %v\n%s", err, out)
	}
	if len(r.Pods) != 7 || len(r.Nodes) != 3 || r.Spread > 1 {
		t.Errorf("%d pods on %d nodes, spread %d: want the tutorial's 7 pods on 3 nodes, spread at most 1", len(r.Pods), len(r.Nodes), r.Spread)
	}
	for _, p := range r.Pods {
		if p.Node == "" {
			t.Errorf("pod %s was not placed", p.Name)
		}
	}
}

// runInstalled runs the installed binary in dir with the test's control
// plane binaries and a cache of its own, and returns its stdout.
func runInstalled(t *testing.T, ctx context.Context, bin, dir string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS="+assets, "XDG_CACHE_HOME="+t.TempDir(), "HOME="+t.TempDir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("playground %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// writeModuleProxy writes a GOPROXY directory serving the files of root
// that git tracks or would track (the working tree, uncommitted changes
// included) as version of the module.
func writeModuleProxy(t *testing.T, root, proxy, version string) {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	listed, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []modzip.File
	for _, name := range strings.Split(strings.TrimRight(string(listed), "\x00"), "\x00") {
		path := filepath.Join(root, name)
		info, err := os.Lstat(path)
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet in git
		}
		if err != nil {
			t.Fatal(err)
		}
		// Read now: the size the zip declares is the size written.
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, treeFile{name: name, info: info, data: data})
	}
	dir := filepath.Join(proxy, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.Create(zf, module.Version{Path: modulePath, Version: version}, files); err != nil {
		t.Fatalf("module zip: %v", err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := `{"Version":"` + version + `","Time":"2026-12-01T00:00:00Z"}`
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(info),
		version + ".mod":  gomod,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeFile is a file of the working tree as read when listed.
type treeFile struct {
	name string
	info os.FileInfo
	data []byte
}

func (f treeFile) Path() string                { return f.name }
func (f treeFile) Lstat() (os.FileInfo, error) { return sizedInfo{f.info, int64(len(f.data))}, nil }
func (f treeFile) Open() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(f.data)), nil
}

// sizedInfo is a file's info with the size of the bytes read.
type sizedInfo struct {
	os.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }

// dropFromModuleCache removes, when the test ends, what go install put in
// the module cache for version (read-only files, as the go command makes
// them).
func dropFromModuleCache(t *testing.T, goCmd, version string) {
	cache := strings.TrimSpace(goEnv(t, goCmd, "GOMODCACHE"))
	escaped, err := module.EscapePath(modulePath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		paths, _ := filepath.Glob(filepath.Join(cache, "cache", "download", filepath.FromSlash(escaped), "@v", version+".*"))
		paths = append(paths, filepath.Join(cache, filepath.FromSlash(escaped)+"@"+version))
		for _, p := range paths {
			_ = filepath.Walk(p, func(path string, info os.FileInfo, err error) error {
				if err == nil && info.IsDir() {
					_ = os.Chmod(path, 0o755)
				}
				return nil
			})
			if err := os.RemoveAll(p); err != nil {
				t.Logf("cleaning the module cache: %v", err)
			}
		}
	})
}

func goEnv(t *testing.T, goCmd, name string) string {
	t.Helper()
	out, err := exec.Command(goCmd, "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return string(out)
}

// cleanGoEnv is the environment without the settings of the go command
// that this module's own build may carry (-mod, -modfile in GOFLAGS, a
// workspace, a GOBIN): a user's go install has none of them.
func cleanGoEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOWORK", "GOBIN":
			continue
		}
		env = append(env, kv)
	}
	return env
}
