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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const header = "/*\nlicense\n*/\n\n"

const chartYAML = "description: The scheduler (v1.37 with our plugins).\nversion: 0.37.1\n" +
	"appVersion: \"v0.37.0\"\nkubeVersion: \">=1.37.0-0 <1.39.0-0\"\n"

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRewrite(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod":                       "module m // 1.37",
		"go.sum":                       "sums 1.37",
		"go.1.36.mod":                  "module m // 1.36",
		"go.1.36.sum":                  "sums 1.36",
		"go.1.35.mod":                  "module m // 1.35",
		"go.1.35.sum":                  "sums 1.35",
		"Makefile":                     "NEWEST_MINOR := 1.37\nOLDER_MINORS := 1.35 1.36\nall:\n",
		chart:                          chartYAML,
		"pkg/shared.go":                header + "package pkg\n",
		"pkg/api_kube137.go":           "//go:build !kube1.35 && !kube1.36\n\n" + header + "package pkg\n\nconst minor = 37\n",
		"pkg/api_kube136.go":           "//go:build kube1.36\n\n" + header + "package pkg\n\nconst minor = 36\n",
		"pkg/api_kube135.go":           "//go:build kube1.35\n\n" + header + "package pkg\n\nconst minor = 35\n",
		"pkg/older.go":                 "//go:build kube1.35 || kube1.36\n\n" + header + "package pkg\n",
		"pkg/linux.go":                 "//go:build linux\n\n" + header + "package pkg\n",
		"testdata/go.1.36.mod":         "not a module file of the root",
		"internal/x/x_kube136_test.go": "//go:build kube1.36\n\npackage x\n",
	})
	c, err := rewrite(dir, "1.36", "v0.36.2")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"go.mod":   "module m // 1.36",
		"go.sum":   "sums 1.36",
		"Makefile": "NEWEST_MINOR := 1.36\nOLDER_MINORS :=\nall:\n",
		chart: "description: The scheduler (v1.36 with our plugins).\nversion: 0.36.2\n" +
			"appVersion: \"v0.36.2\"\nkubeVersion: \">=1.36.0-0 <1.38.0-0\"\n",
		"pkg/shared.go":                header + "package pkg\n",
		"pkg/api_kube136.go":           header + "package pkg\n\nconst minor = 36\n",
		"pkg/older.go":                 header + "package pkg\n",
		"pkg/linux.go":                 "//go:build linux\n\n" + header + "package pkg\n",
		"testdata/go.1.36.mod":         "not a module file of the root",
		"internal/x/x_kube136_test.go": "package x\n",
	}
	if diff := cmp.Diff(want, readTree(t, dir)); diff != "" {
		t.Errorf("release tree (-want +got):\n%s", diff)
	}
	if c.dropped != 2 || c.untagged != 3 {
		t.Errorf("changes = %+v, want 2 dropped, 3 untagged", c)
	}
}

func TestRewriteRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		files   map[string]string
		minor   string
		version string
		want    string
	}{
		"version of another minor": {
			files: map[string]string{"go.1.36.mod": "", "go.1.36.sum": ""}, minor: "1.36", version: "v0.37.0",
			want: "a release of Kubernetes 1.36 is v0.36.<patch>",
		},
		"chart without kubeVersion": {
			files: map[string]string{"go.1.36.mod": "", "go.1.36.sum": "", "Makefile": "NEWEST_MINOR := 1.37\nOLDER_MINORS := 1.36\n",
				chart: "version: 0.37.1\nappVersion: \"v0.37.0\"\n"},
			minor: "1.36", want: "no line matches",
		},
		"no module file": {
			files: map[string]string{"go.mod": "", "Makefile": "NEWEST_MINOR := 1.37\nOLDER_MINORS := 1.36\n"},
			minor: "1.35", want: "has no go.1.35.mod",
		},
		"not a minor": {
			files: map[string]string{"go.mod": ""}, minor: "v1.36.3", want: "want a Kubernetes minor",
		},
		"mixed constraint": {
			files: map[string]string{"go.1.36.mod": "", "go.1.36.sum": "", "Makefile": "NEWEST_MINOR := 1.37\nOLDER_MINORS := 1.36\n",
				"a.go": "//go:build linux && kube1.36\n\npackage a\n"},
			minor: "1.36", want: "mixes a minor's tag with other tags",
		},
		"Makefile without minors": {
			files: map[string]string{"go.1.36.mod": "", "go.1.36.sum": "", "Makefile": "all:\n"},
			minor: "1.36", want: "has no NEWEST_MINOR",
		},
	} {
		t.Run(name, func(t *testing.T) {
			version := tc.version
			if version == "" {
				version = "v0." + strings.TrimPrefix(tc.minor, "1.") + ".0"
			}
			_, err := rewrite(writeTree(t, tc.files), tc.minor, version)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rewrite = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestRepositoryTagsAreMinorOnly runs retag's check on this repository: every
// constraint that names a minor names minors only.
func TestRepositoryTagsAreMinorOnly(t *testing.T) {
	var tagged []string
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "_output" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		line, expr, ok := buildConstraint(src)
		if !ok || !strings.Contains(line, "kube1.") {
			return nil
		}
		tagged = append(tagged, path)
		expr.Eval(func(tag string) bool {
			if !minorTag.MatchString(tag) {
				t.Errorf("%s: %q mixes a minor's tag with %q", path, line, tag)
			}
			return false
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tagged)
	if len(tagged) < 2 {
		t.Errorf("found %d files with a minor's build constraint, want at least pkg/kubeversion's two: %v", len(tagged), tagged)
	}
}
