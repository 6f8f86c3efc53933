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

package plugins

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// trackerRef matches what a reader of the docs cannot follow: the number of
// an issue of the team's tracker, or a section of a design file that is not
// in the repository.
var trackerRef = regexp.MustCompile(`\b[Ii]ssues? #?\d+\b|DESIGN\.md`)

// TestDocsCiteNoTracker keeps the docs and the shipped examples readable
// without the team's tracker: what an issue was must be said in the text.
// It failed on doc/performance.md ("DESIGN.md §4", "issue 13", "issue 8")
// and on the scenarios README.
func TestDocsCiteNoTracker(t *testing.T) {
	root := "../.."
	skip := map[string]bool{".git": true, "bin": true, "_output": true, "node_modules": true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		doc := strings.HasSuffix(path, ".md") ||
			(strings.HasSuffix(path, ".yaml") && (strings.HasPrefix(rel, "examples"+string(filepath.Separator)) || strings.HasPrefix(rel, "manifests"+string(filepath.Separator))))
		if !doc {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := trackerRef.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, which a reader cannot open: say what it was", rel, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
