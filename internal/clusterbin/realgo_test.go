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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealBuild builds the control plane with the real toolchain, as a
// playground without a checkout does, and checks what each binary says its
// version is. make test runs it after make envtest, whose builds leave the
// Go build cache warm: then it links four large binaries, which took 106 s
// here on 2 cores busy with other builds (35 s of CPU); with a cold cache
// it compiles them (minutes: README.md#cold-build). -short skips it.
func TestRealBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building the control plane with the real toolchain")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("this test needs the go command: %v", err)
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
