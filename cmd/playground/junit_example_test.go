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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJUnitExamplesLeaveNoFile: a report that an example of the help
// writes goes outside the clone, or where .gitignore ignores it, so that
// trying the example leaves no untracked file in the clone.
func TestJUnitExamplesLeaveNoFile(t *testing.T) {
	n := 0
	for _, line := range strings.Split(newTestCommand().Example, "\n") {
		fields := strings.Fields(line)
		for i, f := range fields {
			var path string
			switch {
			case f == "--junit" && i+1 < len(fields):
				path = fields[i+1]
			case strings.HasPrefix(f, "--junit="):
				path = strings.TrimPrefix(f, "--junit=")
			default:
				continue
			}
			n++
			if filepath.IsAbs(path) {
				continue
			}
			// Examples run from the clone's root.
			cmd := exec.Command("git", "check-ignore", "-q", "--no-index", path)
			cmd.Dir = "../.."
			if err := cmd.Run(); err != nil {
				t.Errorf("%s: --junit %s is in the clone and not ignored by .gitignore (git check-ignore: %v)", strings.TrimSpace(line), path, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no example of playground test writes --junit: the test checks nothing")
	}
}
