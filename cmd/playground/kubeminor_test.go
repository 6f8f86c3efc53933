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
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

func TestKubeMinorArgs(t *testing.T) {
	tests := []struct {
		args      []string
		wantMinor string
		wantRest  []string
		wantErr   string
	}{
		{args: []string{"--scenario", "s.yaml"}, wantRest: []string{"--scenario", "s.yaml"}},
		{args: []string{"--kube-minor", "1.36", "--scenario", "s.yaml"}, wantMinor: "1.36", wantRest: []string{"--scenario", "s.yaml"}},
		{args: []string{"test", "--kube-minor=1.35", "a.yaml"}, wantMinor: "1.35", wantRest: []string{"test", "a.yaml"}},
		{args: []string{"-kube-minor", "1.36"}, wantMinor: "1.36", wantRest: []string{}},
		{args: []string{"test", "--", "--kube-minor", "1.36"}, wantRest: []string{"test", "--", "--kube-minor", "1.36"}},
		{args: []string{"--kube-minor"}, wantErr: "--kube-minor needs a value: one of 1.35, 1.36, 1.37"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			minor, rest, err := kubeMinorArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if minor != tc.wantMinor {
				t.Errorf("minor %q, want %q", minor, tc.wantMinor)
			}
			if diff := cmp.Diff(tc.wantRest, rest); diff != "" {
				t.Errorf("rest (-want +got):\n%s", diff)
			}
		})
	}
}

// otherMinor is a supported minor that is not this build's.
func otherMinor() string {
	for _, m := range kubeversion.Supported {
		if m != kubeversion.Minor {
			return "1." + strconv.Itoa(m)
		}
	}
	panic("one supported minor")
}

// fakeBin lays out a clone's bin/ with a playground per minor, each a
// script that prints its path, arguments and $KUBEBUILDER_ASSETS, and
// returns the directory of this build's playground.
func fakeBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	for _, m := range kubeversion.Supported {
		dir := bin
		if m != kubeversion.Newest() {
			dir = filepath.Join(bin, "1."+strconv.Itoa(m))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\necho \"$0 $* assets=${KUBEBUILDER_ASSETS:-unset}\"\n"
		if err := os.WriteFile(filepath.Join(dir, "playground"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if kubeversion.Minor == kubeversion.Newest() {
		return bin
	}
	return filepath.Join(bin, kubeversion.String())
}

func TestMinorPlayground(t *testing.T) {
	own := fakeBin(t)
	path, err := minorPlayground(otherMinor(), own)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path).Output(); err != nil || !strings.HasPrefix(string(out), path) {
		t.Errorf("%s ran %q (%v), want the fake playground", path, out, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = minorPlayground(otherMinor(), own)
	want := "make playground envtest KUBE_MINOR=" + otherMinor()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one that says %q", err, want)
	}
	for _, bad := range []string{"1.34", "1.38", "2.0", "yes", "", "1.036x"} {
		_, err := minorPlayground(bad, own)
		if err == nil || !strings.Contains(err.Error(), "use one of 1.35, 1.36, 1.37") {
			t.Errorf("minor %q: error %v, want the supported minors", bad, err)
		}
	}
}

// TestKubeMinorExec runs the playground (this test binary, through
// execute) with --kube-minor naming another minor: that minor's playground
// runs in its place with the rest of the command line and without
// $KUBEBUILDER_ASSETS.
func TestKubeMinorExec(t *testing.T) {
	if dir := os.Getenv("PLAYGROUND_TEST_OWN_DIR"); dir != "" {
		ownDir = func() string { return dir }
		args := os.Args[slices.Index(os.Args, "--")+1:]
		os.Exit(execute(context.Background(), args, os.Stdout, os.Stderr))
	}
	own := fakeBin(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKubeMinorExec$", "--", "--kube-minor", otherMinor(), "--scenario", "s.yaml")
	// TestMain has set $KUBEBUILDER_ASSETS to this minor's control plane.
	cmd.Env = append(os.Environ(), "PLAYGROUND_TEST_OWN_DIR="+own)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	want, err := minorPlayground(otherMinor(), own)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), want+" --scenario s.yaml assets=unset"; got != want {
		t.Errorf("ran %q, want %q", got, want)
	}

	// Its own minor: no other playground runs.
	var stdout, errOut bytes.Buffer
	if code := execute(context.Background(), []string{"--kube-minor", kubeversion.String(), "--version"}, &stdout, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(stdout.String(), "Kubernetes v1."+strconv.Itoa(kubeversion.Minor)) {
		t.Errorf("--version printed %q, want this build's Kubernetes", stdout.String())
	}
}
