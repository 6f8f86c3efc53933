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
	"path"
	"regexp"
	"strings"
)

// A block is one fenced code block of a Markdown file, with the doc-test
// directive on the line before its opening fence, if any.
type block struct {
	line      int    // of the opening fence, 1-based
	info      string // the fence's info string: sh, text, yaml...
	directive string // run, skip or output; "" when none
	reason    string // of a skip
	text      string // the block's lines, the fence's indentation removed
}

// commandInfos are the info strings of the blocks that hold commands: each
// needs a directive, so that none is left untested by accident.
var commandInfos = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

var (
	fenceRE     = regexp.MustCompile("^( *)(```+|~~~+)\\s*([^\\s`]*)")
	directiveRE = regexp.MustCompile(`^\s*<!--\s*doc-test:\s*(\S+)\s*(.*?)\s*-->\s*$`)
)

// parseBlocks returns the fenced blocks of a Markdown document. A directive
// that is malformed, or stands before a block it does not fit, is an error.
func parseBlocks(doc string) ([]block, error) {
	lines := strings.Split(doc, "\n")
	var blocks []block
	var errs []string
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			if directiveRE.MatchString(lines[i]) && (i+1 >= len(lines) || fenceRE.FindStringSubmatch(lines[i+1]) == nil) {
				errs = append(errs, fmt.Sprintf("line %d: a doc-test directive must stand on the line just before a fence", i+1))
			}
			continue
		}
		indent, fence := len(m[1]), m[2]
		b := block{line: i + 1, info: m[3]}
		if i > 0 {
			if d := directiveRE.FindStringSubmatch(lines[i-1]); d != nil {
				b.directive, b.reason = d[1], d[2]
			}
		}
		var body []string
		for i++; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" {
				break
			}
			l := lines[i]
			if n := len(l) - len(strings.TrimLeft(l, " ")); n >= indent {
				l = l[indent:]
			} else {
				l = strings.TrimLeft(l, " ")
			}
			body = append(body, l)
		}
		b.text = strings.Join(body, "\n")
		if err := checkDirective(b); err != nil {
			errs = append(errs, fmt.Sprintf("line %d: %v", b.line, err))
		}
		blocks = append(blocks, b)
	}
	if len(errs) > 0 {
		return blocks, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return blocks, nil
}

// checkDirective: every command block has a directive that fits it; a
// skip says why.
func checkDirective(b block) error {
	switch b.directive {
	case "":
		if commandInfos[b.info] {
			return fmt.Errorf("a ```%s block without a directive: put <!-- doc-test: run --> or <!-- doc-test: skip <reason> --> on the line before it", b.info)
		}
	case "run":
		if !commandInfos[b.info] {
			return fmt.Errorf("doc-test: run stands before a ```%s block; only sh, bash, shell and console blocks run", b.info)
		}
		if b.info == "console" && len(consoleCommands(b.text)) == 0 {
			return fmt.Errorf("doc-test: run stands before a ```console block without a \"$ \" command line")
		}
		if b.reason != "" {
			return fmt.Errorf("doc-test: run takes no argument, got %q", b.reason)
		}
	case "skip":
		if b.reason == "" {
			return fmt.Errorf("doc-test: skip needs a reason: <!-- doc-test: skip <why> -->")
		}
	case "output":
		if b.info != "text" && b.info != "" && b.info != "console" {
			return fmt.Errorf("doc-test: output stands before a ```%s block; it checks text blocks", b.info)
		}
	default:
		return fmt.Errorf("unknown doc-test directive %q: want run, skip <reason> or output", b.directive)
	}
	return nil
}

var linkRE = regexp.MustCompile(`\]\(([^)\s#]+\.md)(?:#[^)]*)?\)`)

// linkedDocs are the repository's Markdown files that doc (at name, relative
// to the repository's root) links to, in order, each once.
func linkedDocs(name, doc string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range linkRE.FindAllStringSubmatch(doc, -1) {
		target := m[1]
		if strings.Contains(target, "://") {
			continue
		}
		p := path.Clean(path.Join(path.Dir(name), target))
		if strings.HasPrefix(p, "../") || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// A consoleCommand is a command of a ```console block ("$ " lines, with
// "> " lines continuing them) and the output the block shows after it.
type consoleCommand struct {
	command, output string
}

func consoleCommands(text string) []consoleCommand {
	var out []consoleCommand
	var cur *consoleCommand
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "$ "):
			out = append(out, consoleCommand{command: strings.TrimPrefix(l, "$ ")})
			cur = &out[len(out)-1]
		case cur == nil:
		case strings.HasPrefix(l, "> ") && cur.output == "":
			cur.command += "\n" + strings.TrimPrefix(l, "> ")
		default:
			cur.output += l + "\n"
		}
	}
	return out
}
