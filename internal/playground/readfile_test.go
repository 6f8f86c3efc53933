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

package playground

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

// writeSized writes a file of exactly size bytes that is valid YAML (a
// comment pads it) and returns its path.
func writeSized(t *testing.T, dir, name, content string, size int) string {
	t.Helper()
	pad := size - len(content) - 2
	if pad < 0 {
		t.Fatalf("content is longer than %d bytes", size)
	}
	data := content + "#" + strings.Repeat("x", pad) + "\n"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadLimits(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	dir := t.TempDir()
	const scenario = "nodes: [{name: a}]\n"
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	config := configHeader + "profiles: [{schedulerName: custom-scheduler}]\n"
	// A sparse file: refused by its size before anything is read.
	overScenarioCap := filepath.Join(dir, "over-cap.yaml")
	if err := os.WriteFile(overScenarioCap, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(overScenarioCap, MaxScenarioBytes+1); err != nil {
		t.Fatal(err)
	}
	atConfigCap := writeSized(t, dir, "config-at-cap.yaml", config, MaxConfigBytes)
	overConfigCap := writeSized(t, dir, "config-over-cap.yaml", config, MaxConfigBytes+1)
	onBase := func(base string) string {
		path := filepath.Join(dir, fmt.Sprintf("on-%s.yaml", filepath.Base(base)))
		if err := os.WriteFile(path, []byte("base: "+base+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	scenarioTooLarge := fmt.Sprintf("larger than 128 MiB (%d bytes), the most a scenario file may hold", MaxScenarioBytes)
	configTooLarge := fmt.Sprintf("larger than 1 MiB (%d bytes), the most a scheduler config file may hold", MaxConfigBytes)
	tests := []struct {
		name string
		load func() error
		// want is a substring of the error; empty means no error.
		want string
	}{
		{name: "scenario", load: func() error { _, err := Load(small, nil); return err }},
		{name: "base", load: func() error { _, err := Load(onBase(small), nil); return err }},
		{name: "scenario one byte over", load: func() error { _, err := Load(overScenarioCap, nil); return err },
			want: overScenarioCap + " is " + scenarioTooLarge},
		{name: "scenario /dev/zero", load: func() error { _, err := Load("/dev/zero", nil); return err },
			want: "/dev/zero is a device, not a regular file: a scenario file must be a file"},
		{name: "base one byte over", load: func() error { _, err := Load(onBase(overScenarioCap), nil); return err },
			want: `base: Invalid value: "` + overScenarioCap + `": ` + overScenarioCap + " is " + scenarioTooLarge},
		{name: "base /dev/zero", load: func() error { _, err := Load(onBase("/dev/zero"), nil); return err },
			want: `base: Invalid value: "/dev/zero": /dev/zero is a device`},
		{name: "config at the cap", load: func() error {
			_, err := prepareConfig(logger, atConfigCap, filepath.Join(dir, "run-1"))
			return err
		}},
		{name: "config one byte over", load: func() error {
			_, err := prepareConfig(logger, overConfigCap, filepath.Join(dir, "run-2"))
			return err
		}, want: overConfigCap + " is " + configTooLarge},
		{name: "config /dev/zero", load: func() error {
			_, err := prepareConfig(logger, "/dev/zero", filepath.Join(dir, "run-3"))
			return err
		}, want: "scheduler config: /dev/zero is a device, not a regular file: a scheduler config file must be a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.load()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestReadFileLimitedPipe: what is not a regular file (a pipe) is read up
// to the cap, and refused beyond it.
func TestReadFileLimitedPipe(t *testing.T) {
	for _, size := range []int{10, 11} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				_, _ = w.Write(bytes.Repeat([]byte("x"), size))
				_ = w.Close()
			}()
			defer func() { _ = r.Close() }()
			data, err := readFileLimited(fmt.Sprintf("/dev/fd/%d", r.Fd()), 10, "test file")
			if size <= 10 && (err != nil || len(data) != size) {
				t.Fatalf("got %d bytes, %v; want %d bytes", len(data), err, size)
			}
			if size > 10 && (err == nil || !strings.Contains(err.Error(), "larger than 0 MiB (10 bytes), the most a test file may hold")) {
				t.Fatalf("error %v, want larger than the cap", err)
			}
		})
	}
}
