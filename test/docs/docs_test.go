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

// Package docs runs the commands of README.md and of the Markdown files it
// links, as a newcomer would from a fresh clone, so that a renamed file,
// flag or binary fails a test instead of a reader.
//
// Every ```sh, ```bash, ```shell and ```console block of those files has a
// directive on the line before its fence:
//
//	<!-- doc-test: run -->            run with bash -euo pipefail
//	<!-- doc-test: skip <reason> -->  not run, for the reason given
//	<!-- doc-test: output -->         (before a ```text block) what the
//	                                  run block before it must print
//
// The blocks of a file run in order in one copy of the clone's tracked
// files, with links to the clone's binaries in bin/, bin/ first on PATH, an empty
// HOME and no KUBECONFIG; exports and `cd` carry over from block to block.
// A `bin/playground ... --keep` line starts that cluster in the background
// and applies the `export KUBECONFIG=...` line its banner prints; it is
// stopped with Ctrl-C at the end of the file. After the last block, the
// copy must hold no changed tracked file and no new file .gitignore does
// not cover: a doc must not leave the reader's clone dirty.
//
// The binaries come from `make envtest kubectl helm karpenter build
// playground` (the Makefile's doc-test target).
package docs

import (
	"crypto/sha256"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var only = flag.String("docs", "", "comma-separated docs to run, relative to the repository's root (default: README.md and the files it links)")

const root = "../.."

// docNames are README.md and the repository's Markdown files it links.
func docNames(t *testing.T) []string {
	if *only != "" {
		return strings.Split(*only, ",")
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, linkedDocs("README.md", string(data))...)
}

// TestDirectives: every command block of the docs says whether it runs;
// fast, and needs nothing built.
func TestDirectives(t *testing.T) {
	names := docNames(t)
	if *only == "" && len(names) < 10 {
		t.Fatalf("README.md links %d docs: %v", len(names)-1, names)
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("README.md links %s: %v", name, err)
			continue
		}
		if _, err := parseBlocks(string(data)); err != nil {
			t.Errorf("%s:\n%v", name, err)
		}
	}
}

// TestDocs runs each doc's blocks.
func TestDocs(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "bin", "playground")); err != nil {
		t.Fatalf("the docs run bin/ (%v): build it with `make envtest kubectl helm karpenter build playground`", err)
	}
	tracked := trackedFiles(t, abs)
	env := blockEnv(t, abs)
	for _, name := range docNames(t) {
		t.Run(name, func(t *testing.T) { runDoc(t, abs, name, tracked, env) })
	}
}

func runDoc(t *testing.T, clone, name string, tracked []string, env []string) {
	data, err := os.ReadFile(filepath.Join(clone, name))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(string(data))
	if err != nil {
		t.Fatal(err) // TestDirectives says more
	}
	dir := filepath.Join(t.TempDir(), "clone")
	sums := copyTracked(t, clone, dir, tracked)
	linkBin(t, filepath.Join(clone, "bin"), filepath.Join(dir, "bin"))
	sh := newShell(t, dir, append(env, "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH")))
	defer sh.stop()
	var last *string // the output of the command block before, nil when it was skipped
	ran := 0
	for _, b := range blocks {
		switch {
		case b.directive == "run" && b.info == "console":
			ran++
			var all strings.Builder
			for _, c := range consoleCommands(b.text) {
				out := runBlock(t, sh, name, b.line, c.command)
				all.WriteString(out)
				if msg := matchOutput(c.output, out); msg != "" {
					t.Errorf("%s:%d: $ %s: the doc shows an output the command does not print: %s\n--- printed:\n%s", name, b.line, c.command, msg, out)
				}
			}
			out := all.String()
			last = &out
		case b.directive == "run":
			ran++
			out := runBlock(t, sh, name, b.line, b.text)
			last = &out
		case b.directive == "output":
			if last == nil {
				t.Errorf("%s:%d: doc-test: output, but the command block before it does not run", name, b.line)
				continue
			}
			if msg := matchOutput(b.text, *last); msg != "" {
				t.Errorf("%s:%d: the doc shows an output the command does not print: %s\n--- printed:\n%s", name, b.line, msg, *last)
			}
		case commandInfos[b.info]:
			last = nil
		}
	}
	if ran == 0 {
		t.Logf("%s: no block runs", name)
		return
	}
	sh.stop()
	sh.keeps, sh.groups = nil, nil
	for _, p := range dirt(t, clone, dir, sums) {
		t.Errorf("%s: the doc's commands %s", name, p)
	}
}

// runBlock runs the commands text of the block at name:line; a failure
// ends the doc's test, as the blocks after depend on it.
func runBlock(t *testing.T, sh *shell, name string, line int, text string) string {
	t.Helper()
	out, err := sh.run(text)
	if err != nil {
		t.Fatalf("%s:%d: the commands failed: %v\n%s\n--- printed:\n%s", name, line, err, text, out)
	}
	t.Logf("%s:%d:\n%s\n--- printed:\n%s", name, line, text, out)
	return out
}

// linkBin makes dir a bin/ of links to the clone's binaries: a doc's `make
// build` replaces the links in the copy, not the clone's binaries that
// other tests use.
func linkBin(t *testing.T, clone, dir string) {
	entries, err := os.ReadDir(clone)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(clone, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// blockEnv is the environment of every block: this one without what a
// newcomer's shell does not have, with the Go caches kept (a newcomer's
// would be warm after the first build).
func blockEnv(t *testing.T, clone string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "KUBECONFIG", "KUBEBUILDER_ASSETS", "HOME", "TMPDIR", "PATH", "SCHEDULER_BINARY", "LICENSE_DRIVER_BINARY", "KUBECTL":
			continue
		}
		env = append(env, kv)
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if i < len(vals) {
			env = append(env, k+"="+vals[i])
		}
	}
	return append(env, "HOME="+t.TempDir(), "TMPDIR="+t.TempDir())
}

func trackedFiles(t *testing.T, clone string) []string {
	out, err := exec.Command("git", "-C", clone, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// copyTracked copies the clone's tracked files to dir and returns their
// checksums.
func copyTracked(t *testing.T, clone, dir string, files []string) map[string][32]byte {
	sums := make(map[string][32]byte, len(files))
	for _, f := range files {
		src := filepath.Join(clone, f)
		info, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the working tree
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		sums[f] = sha256.Sum256(data)
	}
	return sums
}

// dirt is what the blocks left in the copy dir of clone: changed or
// deleted tracked files, new files that .gitignore does not cover.
func dirt(t *testing.T, clone, dir string, sums map[string][32]byte) []string {
	var problems []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "bin" {
			return filepath.SkipDir // ignored by .gitignore, as in a clone
		}
		if d.IsDir() {
			return nil
		}
		seen[rel] = true
		sum, ok := sums[rel]
		if !ok {
			if exec.Command("git", "-C", clone, "check-ignore", "-q", "--no-index", rel).Run() != nil {
				problems = append(problems, "left a file git would show as untracked: "+rel)
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if sha256.Sum256(data) != sum {
			problems = append(problems, "changed a tracked file: "+rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range sums {
		if !seen[f] {
			problems = append(problems, "deleted a tracked file: "+f)
		}
	}
	sort.Strings(problems)
	return problems
}

// TestDirt: a changed, a deleted and a new file are found; a file
// .gitignore covers is not.
func TestDirt(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", "Makefile", "go.mod"}
	dir := t.TempDir()
	sums := copyTracked(t, abs, dir, files)
	for name, data := range map[string]string{"README.md": "changed", "scratch.txt": "x", "_output/release/a.yaml": "a: b"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(dirt(t, abs, dir, sums), "\n")
	want := "changed a tracked file: README.md\ndeleted a tracked file: go.mod\nleft a file git would show as untracked: scratch.txt"
	if got != want {
		t.Errorf("dirt:\n%s\nwant:\n%s", got, want)
	}
}

// TestHarness runs testdata/harness.md, which uses every feature of the
// directives, and checks that mistakes of a doc are found.
func TestHarness(t *testing.T) {
	*only = "test/docs/testdata/harness.md"
	defer func() { *only = "" }()
	TestDocs(t)
}

// TestHarnessFindsMistakes runs TestDocs on docs with mistakes, in a
// process of its own, and checks that it fails for each.
func TestHarnessFindsMistakes(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDocs$", "-test.v",
		"-docs=test/docs/testdata/mistakes.md,test/docs/testdata/failing.md")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("TestDocs passed on docs with mistakes:\n%s", out)
	}
	for _, want := range []string{
		`mistakes.md:11: the doc shows an output the command does not print`,
		`mistakes.md: the doc's commands changed a tracked file: README.md`,
		`mistakes.md: the doc's commands left a file git would show as untracked: stray.txt`,
		`failing.md:4: the commands failed: exit status`,
		`unknown flag: --scenarios`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("TestDocs's output lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^\s+never reached$`).Match(out) {
		t.Errorf("the block after a failed one ran:\n%s", out)
	}
}
