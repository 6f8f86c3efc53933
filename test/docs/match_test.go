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

package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var (
	spacesRE      = regexp.MustCompile(`\s+`)
	placeholderRE = regexp.MustCompile(`<[^<>]+>`)
)

// linePattern compiles one line of a doc's output block: runs of spaces
// compare as one, and text in angle brackets stands for any text.
func linePattern(line string) *regexp.Regexp {
	line = spacesRE.ReplaceAllString(strings.TrimSpace(line), " ")
	var re strings.Builder
	re.WriteString("^")
	last := 0
	for _, loc := range placeholderRE.FindAllStringIndex(line, -1) {
		re.WriteString(regexp.QuoteMeta(line[last:loc[0]]))
		re.WriteString(".*?")
		last = loc[1]
	}
	re.WriteString(regexp.QuoteMeta(line[last:]))
	re.WriteString("$")
	return regexp.MustCompile(re.String())
}

// matchOutput checks that output holds the lines of want as the doc shows
// them: consecutive lines of want are consecutive lines of output, except
// where want has a line "..." (any lines); what comes before the first and
// after the last line is free. Blank lines are ignored on both sides. It
// returns "" on a match, else what was not found and where the search
// stopped.
func matchOutput(want, output string) string {
	var got []string
	for _, l := range strings.Split(output, "\n") {
		if l = spacesRE.ReplaceAllString(strings.TrimSpace(l), " "); l != "" {
			got = append(got, l)
		}
	}
	// Runs of consecutive expected lines, split at "...".
	var runs [][]string
	var cur []string
	for _, l := range strings.Split(want, "\n") {
		switch l = strings.TrimSpace(l); l {
		case "":
		case "...":
			if len(cur) > 0 {
				runs = append(runs, cur)
			}
			cur = nil
		default:
			cur = append(cur, l)
		}
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	from := 0
	for _, run := range runs {
		at := findRun(run, got, from)
		if at < 0 {
			return fmt.Sprintf("after its line %d (blank lines not counted), the output has not these lines one after the other:\n  %s", from, strings.Join(run, "\n  "))
		}
		from = at + len(run)
	}
	return ""
}

// findRun is the first index at or after from where got holds run's lines
// one after the other, or -1.
func findRun(run, got []string, from int) int {
	patterns := make([]*regexp.Regexp, len(run))
	for i, l := range run {
		patterns[i] = linePattern(l)
	}
	for start := from; start+len(run) <= len(got); start++ {
		ok := true
		for i, p := range patterns {
			if !p.MatchString(got[start+i]) {
				ok = false
				break
			}
		}
		if ok {
			return start
		}
	}
	return -1
}

func TestMatchOutput(t *testing.T) {
	output := `starting the control plane
  from /tmp/x

pods per node:
  tutorial-1  ███ 3
  tutorial-2  ██ 2
spread (max-min pods per node): 1
`
	for _, tc := range []struct {
		want string
		ok   bool
	}{
		{"pods per node:\n  tutorial-1  ███ 3", true},
		{"pods per node:\n tutorial-1   ███   3\n", true},
		{"starting the control plane\n...\nspread (max-min pods per node): 1", true},
		{"starting the control plane\n  from <dir>\n...\n  <node>  ██ 2", true},
		// A line dropped from the middle without "...".
		{"pods per node:\n  tutorial-2  ██ 2", false},
		{"spread (max-min pods per node): 1\n...\npods per node:", false},
		{"spread (max-min pods per node): 2", false},
	} {
		if got := matchOutput(tc.want, output); (got == "") != tc.ok {
			t.Errorf("matchOutput(%q): %q, want a match: %v", tc.want, got, tc.ok)
		}
	}
}

func TestParseBlocks(t *testing.T) {
	doc := "# t\n\n<!-- doc-test: run -->\n```sh\nbin/playground\n```\n\n<!-- doc-test: output -->\n```text\nspread: 1\n```\n\n" +
		"1. a step\n\n   <!-- doc-test: skip placeholder <context> -->\n   ```sh\n   kubectl --context x\n     get pods\n   ```\n\n```yaml\na: b\n```\n"
	blocks, err := parseBlocks(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []block{
		{line: 4, info: "sh", directive: "run", text: "bin/playground"},
		{line: 9, info: "text", directive: "output", text: "spread: 1"},
		{line: 16, info: "sh", directive: "skip", reason: "placeholder <context>", text: "kubectl --context x\n  get pods"},
		{line: 21, info: "yaml", text: "a: b"},
	}
	if len(blocks) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(blocks), len(want), blocks)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, blocks[i], want[i])
		}
	}
	for _, bad := range []struct{ doc, err string }{
		{"```sh\nls\n```\n", "without a directive"},
		{"<!-- doc-test: skip -->\n```sh\nls\n```\n", "needs a reason"},
		{"<!-- doc-test: run -->\n```yaml\na: b\n```\n", "only sh, bash, shell and console blocks run"},
		{"<!-- doc-test: run -->\n```console\nls\n```\n", "without a \"$ \" command line"},
		{"<!-- doc-test: runn -->\n```sh\nls\n```\n", `unknown doc-test directive "runn"`},
		{"<!-- doc-test: run -->\n\n```sh\nls\n```\n", "just before a fence"},
		{"mark it <!-- doc-test: run --> in text\n<!-- doc-test: run -->\nls\n", "just before a fence"},
	} {
		if _, err := parseBlocks(bad.doc); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("parseBlocks(%q): %v, want an error with %q", bad.doc, err, bad.err)
		}
	}
}

func TestLinkedDocs(t *testing.T) {
	doc := "[a](doc/monitoring.md) [b](pkg/x/README.md#weights) [c](doc/monitoring.md#y) [d](https://e.com/f.md) [g](../out.md) [h](LICENSE)"
	got := strings.Join(linkedDocs("README.md", doc), " ")
	if want := "doc/monitoring.md pkg/x/README.md"; got != want {
		t.Errorf("linkedDocs: %q, want %q", got, want)
	}
	if got := strings.Join(linkedDocs("pkg/x/README.md", "[r](../../README.md) [s](../y/README.md)"), " "); got != "README.md pkg/y/README.md" {
		t.Errorf("linkedDocs from pkg/x: %q", got)
	}
}

func TestConsoleCommands(t *testing.T) {
	got := consoleCommands("$ bin/kubectl get pods \\\n> -o wide\nNAME READY\nx 1/1\n$ true")
	want := []consoleCommand{{command: "bin/kubectl get pods \\\n-o wide", output: "NAME READY\nx 1/1\n"}, {command: "true"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("consoleCommands: %q, want %q", got, want)
	}
}
