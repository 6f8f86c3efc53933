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
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestConfigNotFound: a relative scheduler config that is not there names
// the working directory and, for a playground of a clone, the clone's file
// of that path or where the clone's configs are. cmd/playground's
// TestAssetsNextToBinary runs it from a clone's bin/.
func TestConfigNotFound(t *testing.T) {
	clone := t.TempDir()
	shipped := filepath.Join(clone, "manifests", "nodelesspods", "scheduler-config.yaml")
	if err := os.MkdirAll(filepath.Dir(shipped), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shipped, []byte("kind: KubeSchedulerConfiguration\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const wd = "/elsewhere"
	err := &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}
	for _, tt := range []struct {
		name, path, clone, want string
	}{
		{"the clone has it", "manifests/nodelesspods/scheduler-config.yaml", clone,
			"open x: file does not exist (relative to the working directory /elsewhere); the clone of this playground has " + shipped},
		{"the clone has not", "manifests/nope.yaml", clone,
			"open x: file does not exist (relative to the working directory /elsewhere); the clone of this playground has its scheduler configs in " +
				filepath.Join(clone, "manifests") + " and " + filepath.Join(clone, "examples", "scenarios")},
		{"no clone", "manifests/nope.yaml", "", "open x: file does not exist (relative to the working directory /elsewhere)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := notFoundIn(tt.path, err, wd, tt.clone)
			if got.Error() != tt.want || !errors.Is(got, fs.ErrNotExist) {
				t.Errorf("got %q, want %q, wrapping fs.ErrNotExist", got, tt.want)
			}
		})
	}
	// An absolute path, or another error, is left as it is.
	abs := &fs.PathError{Op: "open", Path: "/a", Err: fs.ErrNotExist}
	if got := configNotFound("/a", abs); got != error(abs) {
		t.Errorf("an absolute path: %v", got)
	}
	perm := &fs.PathError{Op: "open", Path: "a", Err: fs.ErrPermission}
	if got := configNotFound("a", perm); got != error(perm) {
		t.Errorf("a permission error: %v", got)
	}
}
