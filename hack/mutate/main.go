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

// Command mutate applies the one-line mutations that gremlins v0.6.0 does not
// make (it only swaps operators) to the non-test, non-generated Go files of
// packages, one mutant at a time, and runs each package's tests:
//
//   - literal: an integer constant plus one, a string constant emptied (or "x"
//     when empty), true and false swapped;
//   - negate: an if condition, or a case of a switch without a tag, negated
//     as a whole;
//   - drop: an expression, assignment (not :=) or ++/-- statement removed.
//
// It edits files in place, so run it only on a copy of the tree made for it
// (git worktree add /tmp/mut HEAD): -C names that copy and is required, and a
// checkout with uncommitted changes is refused. Each file is restored after its
// mutant, and on SIGINT/SIGTERM.
//
//	go run ./hack/mutate -C /tmp/mut -timeout 2m ./pkg/podowner ./apis/config/validation
//
// -run limits each run to some tests (go test -run), for packages whose full
// suite is slow; a survivor must then be checked against the full suite.
//
// Each mutant prints as KILLED, LIVED, TIMED OUT or NOT VIABLE (does not
// build), then one summary line per package.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type mutant struct {
	file       string
	start, end int // byte offsets of the replaced text
	line, col  int
	kind       string
	repl       string
}

type status string

const (
	killed    status = "KILLED"
	lived     status = "LIVED"
	timedOut  status = "TIMED OUT"
	notViable status = "NOT VIABLE"
)

// logFuncs are the calls whose string arguments are log text: emptying them
// changes no behaviour a unit test can observe, so they are not mutated.
var logFuncs = map[string]bool{"Info": true, "Error": true, "InfoS": true, "ErrorS": true}

func main() {
	dir := flag.String("C", "", "root of the copy of the tree to mutate (required; never the tree others work in)")
	timeout := flag.Duration("timeout", 2*time.Minute, "per-mutant go test timeout")
	runTests := flag.String("run", "", "go test -run regexp, to run a package's fast tests only (check the survivors with all of them)")
	flag.Parse()
	if *dir == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutate -C <copy of the tree> [-timeout d] ./pkg/...")
		os.Exit(2)
	}
	// A tree with uncommitted changes is someone's work in progress (or a
	// mutant left by a killed run): never mutate it.
	if out, err := exec.Command("git", "-C", *dir, "status", "--porcelain", "--untracked-files=no").Output(); err != nil || len(out) > 0 {
		fmt.Fprintf(os.Stderr, "mutate: %s is not a clean git checkout (%v):\n%s", *dir, err, out)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed := false
	for _, pkg := range flag.Args() {
		if err := run(ctx, *dir, pkg, *runTests, *timeout); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", pkg, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func run(ctx context.Context, root, pkg, runTests string, timeout time.Duration) error {
	files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
	if err != nil {
		return err
	}
	var mutants []mutant
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "zz_generated") {
			continue
		}
		ms, err := find(f)
		if err != nil {
			return err
		}
		mutants = append(mutants, ms...)
	}
	counts := map[status]int{}
	for _, m := range mutants {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		st, err := try(ctx, root, pkg, runTests, m, timeout)
		if err != nil {
			return err
		}
		counts[st]++
		rel, _ := filepath.Rel(root, m.file)
		fmt.Printf("%-10s %s:%d:%d %s -> %s\n", st, rel, m.line, m.col, m.kind, m.repl)
	}
	score := 0.0
	if n := counts[killed] + counts[lived]; n > 0 {
		score = 100 * float64(counts[killed]) / float64(n)
	}
	fmt.Printf("%s: mutants %d, killed %d, lived %d, timed out %d, not viable %d, score %.1f%%\n",
		pkg, len(mutants), counts[killed], counts[lived], counts[timedOut], counts[notViable], score)
	return nil
}

// find lists the mutants of one file, in source order.
func find(path string) ([]mutant, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	var ms []mutant
	add := func(n ast.Node, kind, repl string) {
		p := fset.Position(n.Pos())
		ms = append(ms, mutant{file: path, start: p.Offset, end: fset.Position(n.End()).Offset,
			line: p.Line, col: p.Column, kind: kind, repl: repl})
	}
	skip := map[ast.Node]bool{} // literals that are not values: imports, tags, log text
	for _, imp := range f.Imports {
		skip[imp.Path] = true
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				skip[n.Tag] = true
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && logFuncs[sel.Sel.Name] {
				for _, a := range n.Args {
					skip[a] = true
				}
			}
		case *ast.BasicLit:
			if skip[n] {
				return true
			}
			switch n.Kind {
			case token.INT:
				if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil && v < 1<<62 {
					add(n, "literal", strconv.FormatInt(v+1, 10))
				}
			case token.STRING:
				if s, err := strconv.Unquote(n.Value); err == nil && s != "" {
					add(n, "literal", `""`)
				} else if err == nil {
					add(n, "literal", `"x"`)
				}
			}
		case *ast.Ident:
			switch n.Name {
			case "true":
				add(n, "literal", "false")
			case "false":
				add(n, "literal", "true")
			}
		case *ast.IfStmt:
			p, e := fset.Position(n.Cond.Pos()).Offset, fset.Position(n.Cond.End()).Offset
			add(n.Cond, "negate", "!("+string(src[p:e])+")")
		case *ast.SwitchStmt:
			if n.Tag != nil {
				return true
			}
			// A tagless switch: each case expression is a condition.
			for _, s := range n.Body.List {
				for _, c := range s.(*ast.CaseClause).List {
					p, e := fset.Position(c.Pos()).Offset, fset.Position(c.End()).Offset
					add(c, "negate", "!("+string(src[p:e])+")")
				}
			}
		case *ast.BlockStmt:
			for _, s := range n.List {
				switch s := s.(type) {
				case *ast.ExprStmt, *ast.IncDecStmt:
					add(s, "drop", "")
				case *ast.AssignStmt:
					if s.Tok != token.DEFINE {
						add(s, "drop", "")
					}
				}
			}
		}
		return true
	})
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].start < ms[j].start })
	return ms, nil
}

// try writes the mutant, runs the package's tests and restores the file.
func try(ctx context.Context, root, pkg, runTests string, m mutant, timeout time.Duration) (st status, err error) {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return "", err
	}
	defer func() {
		if werr := os.WriteFile(m.file, orig, 0o644); werr != nil && err == nil {
			err = werr
		}
	}()
	mutated := make([]byte, 0, len(orig)+len(m.repl))
	mutated = append(append(append(mutated, orig[:m.start]...), m.repl...), orig[m.end:]...)
	if err := os.WriteFile(m.file, mutated, 0o644); err != nil {
		return "", err
	}
	// The go test timeout fails a hung test binary; the context's, a little
	// later, also stops a hung build.
	tctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	args := []string{"test", "-count=1", "-failfast", "-timeout", timeout.String()}
	if runTests != "" {
		args = append(args, "-run", runTests)
	}
	cmd := exec.CommandContext(tctx, "go", append(args, "./"+strings.TrimPrefix(pkg, "./"))...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
		return lived, nil
	case tctx.Err() != nil && ctx.Err() == nil:
		return timedOut, nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case !errors.As(runErr, &exitErr):
		return "", runErr
	case bytes.Contains(out.Bytes(), []byte("[build failed]")) || bytes.Contains(out.Bytes(), []byte("[setup failed]")):
		return notViable, nil
	case bytes.Contains(out.Bytes(), []byte("panic: test timed out")):
		return timedOut, nil
	default:
		return killed, nil
	}
}
