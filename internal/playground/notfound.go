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
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// configNotFound is err, of reading the scheduler config at path, saying,
// when path is relative and not there, the working directory it was looked
// up in and, when the playground runs from a clone's bin/, the clone's
// file of that path or else where the clone's configs are: the README's
// paths are relative to the clone's root, and a newcomer may run them from
// elsewhere.
func configNotFound(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) || filepath.IsAbs(path) {
		return err
	}
	wd, wdErr := os.Getwd()
	if wdErr != nil {
		return err
	}
	return notFoundIn(path, err, wd, cloneRoot())
}

// notFoundIn is configNotFound with the working directory wd and the
// playground's clone ("" if none).
func notFoundIn(path string, err error, wd, clone string) error {
	if clone == "" {
		return fmt.Errorf("%w (relative to the working directory %s)", err, wd)
	}
	if alt := filepath.Join(clone, path); isFile(alt) {
		return fmt.Errorf("%w (relative to the working directory %s); the clone of this playground has %s", err, wd, alt)
	}
	return fmt.Errorf("%w (relative to the working directory %s); the clone of this playground has its scheduler configs in %s and %s",
		err, wd, filepath.Join(clone, "manifests"), filepath.Join(clone, "examples", "scenarios"))
}

// cloneRoot is the clone the running playground was built in, the parent
// of its directory when that is a bin/ beside examples/scenarios, or "".
func cloneRoot() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	bin := filepath.Dir(exe)
	root := filepath.Dir(bin)
	if filepath.Base(bin) != "bin" {
		return ""
	}
	if st, err := os.Stat(filepath.Join(root, "examples", "scenarios")); err != nil || !st.IsDir() {
		return ""
	}
	return root
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
