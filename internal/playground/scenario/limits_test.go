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

package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScenarioFileLimits(t *testing.T) {
	dir := t.TempDir()
	const scenario = "nodes: [{name: a}]\n"
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	// A sparse file: refused by its size before anything is read.
	overScenarioCap := filepath.Join(dir, "over-cap.yaml")
	if err := os.WriteFile(overScenarioCap, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(overScenarioCap, MaxScenarioBytes+1); err != nil {
		t.Fatal(err)
	}
	onBase := func(base string) string {
		path := filepath.Join(dir, fmt.Sprintf("on-%s.yaml", filepath.Base(base)))
		if err := os.WriteFile(path, []byte("base: "+base+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	scenarioTooLarge := fmt.Sprintf("larger than 128 MiB (%d bytes), the most a scenario file may hold", MaxScenarioBytes)
	tests := []struct {
		name string
		load func() error
		// want is a substring of the error; empty means no error.
		want string
	}{
		{name: "scenario", load: func() error { _, err := loadPlan(small, nil); return err }},
		{name: "base", load: func() error { _, err := loadPlan(onBase(small), nil); return err }},
		{name: "scenario one byte over", load: func() error { _, err := loadPlan(overScenarioCap, nil); return err },
			want: overScenarioCap + " is " + scenarioTooLarge},
		{name: "scenario /dev/zero", load: func() error { _, err := loadPlan("/dev/zero", nil); return err },
			want: "/dev/zero is a device, not a regular file: a scenario file must be a file"},
		{name: "base one byte over", load: func() error { _, err := loadPlan(onBase(overScenarioCap), nil); return err },
			want: `base: Invalid value: "` + overScenarioCap + `": ` + overScenarioCap + " is " + scenarioTooLarge},
		{name: "base /dev/zero", load: func() error { _, err := loadPlan(onBase("/dev/zero"), nil); return err },
			want: `base: Invalid value: "/dev/zero": /dev/zero is a device`},
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

// TestRelativeScenarioNotFound: a relative scenario path that is not there
// names the working directory it was looked up in, and a clone's file of
// that path when the binary runs from the clone's bin/.
func TestRelativeScenarioNotFound(t *testing.T) {
	clone := t.TempDir()
	example := filepath.Join(clone, "examples", "scenarios", "tutorial.yaml")
	if err := os.MkdirAll(filepath.Dir(example), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(example, []byte("nodes: [{name: a}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	_, err := loadPlan(filepath.Join("examples", "scenarios", "tutorial.yaml"), nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "relative to the working directory "+elsewhere) {
		t.Errorf("error %v, want it not found, naming the working directory %s", err, elsewhere)
	}
	if got := inClone(filepath.Join("examples", "scenarios", "tutorial.yaml"), filepath.Join(clone, "bin")); got != example {
		t.Errorf("inClone = %q, want %q", got, example)
	}
	if got := inClone(filepath.Join("examples", "scenarios", "nope.yaml"), filepath.Join(clone, "bin")); got != "" {
		t.Errorf("inClone of a missing file = %q, want none", got)
	}
	if _, err := loadPlan(filepath.Join(elsewhere, "nope.yaml"), nil); err == nil || strings.Contains(err.Error(), "working directory") {
		t.Errorf("an absolute path: error %v, want a plain not-found", err)
	}
}
