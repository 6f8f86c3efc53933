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

// The files that cannot import this package but list its plugins are held
// to it here. The chart's values.schema.json is checked by
// test/integration's TestChartSchemaPluginNames (it needs the in-tree
// registry too), performance-config.yaml by scheduler_perf's
// TestPerfConfigCoversPlugins.

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
)

// root is the repository, seen from this package.
const root = "../.."

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// nameDiff returns the names of want that got lacks and those of got that
// want lacks, each sorted.
func nameDiff(want, got []string) (missing, extra []string) {
	for _, n := range want {
		if !slices.Contains(got, n) {
			missing = append(missing, n)
		}
	}
	for _, n := range got {
		if !slices.Contains(want, n) {
			extra = append(extra, n)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

// section returns the lines of the markdown section headed heading, up to
// the next heading of any level.
func section(t *testing.T, file, doc, heading string) []string {
	t.Helper()
	lines := strings.Split(doc, "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s has no line %q", file, heading)
	}
	var out []string
	for _, line := range lines[start+1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		out = append(out, line)
	}
	return out
}

// tableRows returns the cells of the rows of the first markdown table in
// lines whose header line starts with headerPrefix (header and separator
// excluded).
func tableRows(t *testing.T, file string, lines []string, headerPrefix string) [][]string {
	t.Helper()
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, headerPrefix) })
	if start < 0 || start+1 >= len(lines) {
		t.Fatalf("%s has no table whose header starts with %q", file, headerPrefix)
	}
	var rows [][]string
	for _, line := range lines[start+2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

var (
	backticked  = regexp.MustCompile("`([^`]+)`")
	capitalized = regexp.MustCompile(`\b[A-Z][A-Za-z]+\b`)
)

// TestREADMEPluginTable holds the README's plugin table to the registry:
// one row per plugin, and in each row the extension points its type
// implements.
func TestREADMEPluginTable(t *testing.T) {
	const file = "README.md"
	lines := strings.Split(readRepoFile(t, file), "\n")
	rows := tableRows(t, file, lines, "| plugin | extension points |")
	points := map[string][]string{}
	for _, row := range rows {
		m := backticked.FindStringSubmatch(row[0])
		if m == nil || len(row) < 2 {
			t.Errorf("%s plugin table: row %q has no `Name` in its first cell", file, row)
			continue
		}
		points[m[1]] = capitalized.FindAllString(row[1], -1)
	}
	var got []string
	for name := range points {
		got = append(got, name)
	}
	if missing, extra := nameDiff(Names(), got); len(missing)+len(extra) > 0 {
		t.Errorf("%s plugin table: missing %q, extra %q (want pkg/plugins' plugins)", file, missing, extra)
	}
	for _, p := range All() {
		if written, ok := points[p.Name]; ok {
			if missing, extra := nameDiff(p.ExtensionPoints(), written); len(missing)+len(extra) > 0 {
				t.Errorf("%s plugin table, %s's extension points: missing %q, extra %q (want those its type implements: %q)", file, p.Name, missing, extra, p.ExtensionPoints())
			}
		}
	}
}

// TestREADMEImportExample checks that the README's example of a scheduler
// build of one's own registers every plugin.
func TestREADMEImportExample(t *testing.T) {
	const file = "README.md"
	body := strings.Join(section(t, file, readRepoFile(t, file), "## Import the plugins into your own scheduler build"), "\n")
	var got []string
	for _, m := range regexp.MustCompile(`app\.WithPlugin\((\w+)\.Name,`).FindAllStringSubmatch(body, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, p := range All() {
		want = append(want, strings.ToLower(p.Name))
	}
	if missing, extra := nameDiff(want, got); len(missing)+len(extra) > 0 {
		t.Errorf("%s, Import the plugins: app.WithPlugin(<package>.Name, ...) missing for %q, extra %q (want one per pkg/plugins plugin)", file, missing, extra)
	}
}

// TestBenchPluginFilter holds hack/bench.sh's jq filter of per-plugin times
// to the registry: every plugin of ours, plus in-tree plugins to compare with.
func TestBenchPluginFilter(t *testing.T) {
	const file = "hack/bench.sh"
	var got []string
	for _, m := range regexp.MustCompile(`\.labels\.plugin == "(\w+)"`).FindAllStringSubmatch(readRepoFile(t, file), -1) {
		got = append(got, m[1])
	}
	inTree := frameworkplugins.NewInTreeRegistry()
	var ours []string
	for _, name := range got {
		if _, ok := inTree[name]; !ok {
			ours = append(ours, name)
		}
	}
	if missing, extra := nameDiff(Names(), ours); len(missing)+len(extra) > 0 {
		t.Errorf("%s: the per-plugin jq filter (.labels.plugin == ...) misses %q and names %q, which is neither ours nor in-tree", file, missing, extra)
	}
}

// listsAllPlugins reports whether text names every plugin of the registry.
func listsAllPlugins(text string) bool {
	for _, name := range Names() {
		if !strings.Contains(text, name) {
			return false
		}
	}
	return true
}

// TestAddingAPluginSection holds the README's "Adding a plugin" section to
// the repository: each path it lists exists (with foo/Foo read as each
// plugin's package and name), each test it names exists, and every file
// that names all the plugins (so will name the next one too) matches one of
// its paths.
// upstreamSuites is the package of upstream's scheduler_perf suites.
const upstreamSuites = "test/integration/scheduler_perf/upstream/"

func TestAddingAPluginSection(t *testing.T) {
	const file = "README.md"
	lines := section(t, file, readRepoFile(t, file), "## Adding a plugin")
	rows := tableRows(t, file, lines, "| file | what to add |")
	tests := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Test[A-Z]\\w*)`").FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
		tests[m[1]] = false
	}
	// unchecked are the paths of rows this minor's tree need not have: they
	// count as listed, but need not exist.
	var patterns, unchecked []string
	for _, row := range rows {
		ms := backticked.FindAllStringSubmatch(row[0], -1)
		if ms == nil {
			t.Errorf("%s, Adding a plugin: row %q names no `path` in its first cell", file, row[0])
		}
		if !kubeversion.Has(kubeversion.UpstreamPerfSuites) && strings.Contains(row[0], upstreamSuites) {
			// The release tree of an older minor has no such package.
			t.Logf("%s, Adding a plugin: row %q not checked: %v", file, row[0], kubeversion.Unavailable(kubeversion.UpstreamPerfSuites))
			for _, m := range regexp.MustCompile("`(Test[A-Z]\\w*)`").FindAllStringSubmatch(strings.Join(row, " "), -1) {
				delete(tests, m[1])
			}
			for _, m := range ms {
				unchecked = append(unchecked, m[1])
			}
			continue
		}
		for _, m := range ms {
			patterns = append(patterns, m[1])
		}
	}
	// expand returns pattern for each plugin, foo and Foo replaced.
	expand := func(pattern string) []string {
		var out []string
		for _, name := range Names() {
			out = append(out, strings.NewReplacer("foo", strings.ToLower(name), "Foo", name).Replace(pattern))
		}
		return slices.Compact(out)
	}
	for _, pattern := range patterns {
		for _, p := range expand(pattern) {
			matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil || len(matches) == 0 {
				t.Errorf("%s, Adding a plugin: `%s` lists %s, which does not exist (err: %v)", file, pattern, p, err)
			}
		}
	}

	listed := func(rel string) bool {
		for _, pattern := range slices.Concat(patterns, unchecked) {
			for _, p := range expand(pattern) {
				if ok, _ := path.Match(p, rel); ok {
					return true
				}
			}
		}
		return false
	}
	var unlisted []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(name, ".") || name == "bin" || name == "_output" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch path.Ext(name) {
		case ".go", ".md", ".yaml", ".yml", ".json", ".sh", ".txt":
		default:
			if name != "Makefile" {
				return nil
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if listsAllPlugins(string(data)) && !listed(rel) {
			unlisted = append(unlisted, rel)
		}
		if strings.HasSuffix(name, "_test.go") {
			for test := range tests {
				if strings.Contains(string(data), "\nfunc "+test+"(") {
					tests[test] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for test, found := range tests {
		if !found {
			t.Errorf("%s, Adding a plugin: names `%s`, which no _test.go file declares", file, test)
		}
	}
	if diff := cmp.Diff([]string(nil), unlisted); diff != "" {
		t.Errorf("%s, Adding a plugin: files that name every plugin (%q) but are not listed (-want, +got):\n%s", file, Names(), diff)
	}
}
