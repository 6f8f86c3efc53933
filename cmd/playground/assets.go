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
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/adminsched/scheduler-plugins/internal/clusterbin"
	"github.com/adminsched/scheduler-plugins/internal/localcluster"
	"github.com/adminsched/scheduler-plugins/internal/playground"
)

// findAssets is the directory of the control plane's binaries: given
// (--assets), else $KUBEBUILDER_ASSETS, else the playground's own directory
// if it holds them, else ./bin if it holds them; "" when none applies.
//
// The playground's directory comes before ./bin: in a clone's bin/, make
// built those binaries from the same go.mod as the playground, whatever
// the working directory, whose ./bin may be another clone's, of another
// Kubernetes version.
func findAssets(given string) string {
	if given != "" {
		return given
	}
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	if dir := executableDir(); dir != "" && localcluster.CheckAssets(dir) == nil {
		return dir
	}
	if dir, err := filepath.Abs("bin"); err == nil && localcluster.CheckAssets(dir) == nil {
		return dir
	}
	return ""
}

// executableDir is the directory of the running playground, symlinks
// resolved (a link to a clone's bin/playground finds that bin/), or ""
// when the system does not say.
func executableDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe)
}

// notHeld says where findAssets looked for the binaries in vain: ./bin,
// and the playground's own directory when it is another bin/ (a clone's,
// where make envtest was not run).
func notHeld() string {
	own := executableDir()
	local, err := filepath.Abs("bin")
	if filepath.Base(own) != "bin" || (err == nil && own == local) {
		return "./bin does not hold the control plane's binaries"
	}
	return fmt.Sprintf("neither %s (the playground's directory) nor ./bin holds the control plane's binaries", own)
}

// ensureAssets builds the control plane's binaries into the user's cache
// (once per playground version); tests replace it, so that none builds.
var ensureAssets = clusterbin.Ensure

// obtainAssets is where the control plane's binaries come from when
// findAssets found none: the user's cache, built there the first time, with
// the build's progress on progress. Its caller has checked every input
// first. Its error is an *playground.AssetsError: nothing ran.
func obtainAssets(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := ensureAssets(ctx, clusterbin.Options{Progress: progress})
	if err != nil {
		return "", &playground.AssetsError{Err: fmt.Errorf("no --assets given, $KUBEBUILDER_ASSETS is not set and %s: building them: %w", notHeld(), err)}
	}
	return dir, nil
}

// assetsFor is the assets directory of a run of opts: findAssets(given),
// else, once every input of opts is checked, obtainAssets. An input error
// comes first, so that bad input is reported as such, at once.
func assetsFor(ctx context.Context, given string, opts playground.Options, progress io.Writer) (string, error) {
	if dir := findAssets(given); dir != "" {
		return dir, nil
	}
	if err := playground.CheckInputs(ctx, opts); err != nil {
		return "", err
	}
	return obtainAssets(ctx, progress)
}
