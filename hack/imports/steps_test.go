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

// Package imports holds the import rules `make verify` checks (go list,
// as report's TestPure does), where no package's own test could see them
// all.
package imports

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const playground = "github.com/adminsched/scheduler-plugins/internal/playground/"

// steps are the playground's pipeline: scenario, apply, settle and
// report. Words they share live in a package that is not a step
// (internal/playground/workload); the engine (internal/playground) and the
// front-ends that read a pipeline's ends, snapshot (writes a scenario) and
// policytest (checks a scenario's expectations against report's results),
// are not steps and may import them.
var steps = []string{"scenario", "apply", "settle", "report"}

// TestStepsDoNotImportEachOther fails on an import of a step package by
// another one, direct or through packages that are not steps.
func TestStepsDoNotImportEachOther(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./internal/playground/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderrOf(err))
	}
	graph := parseGraph(string(out))
	for _, s := range steps {
		if _, ok := graph[playground+s]; !ok {
			t.Errorf("go list does not list step package %s: update steps", playground+s)
		}
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestViolations checks the check: an added import between two steps, or
// one through a shared package, is named with its chain.
func TestViolations(t *testing.T) {
	p := func(s string) string { return playground + s }
	graph := map[string][]string{
		p("scenario"):   {"fmt", p("vocab")},
		p("vocab"):      {p("apply")},
		p("apply"):      {p("vocab"), "k8s.io/client-go/dynamic"},
		p("settle"):     {p("report")},
		p("report"):     {p("vocab")},
		p("policytest"): {p("scenario"), p("report"), p("apply")},
	}
	want := []string{
		"internal/playground/scenario imports internal/playground/apply (through internal/playground/vocab): step packages do not import each other; move the shared words to a package that is not a step",
		"internal/playground/settle imports internal/playground/report: step packages do not import each other; move the shared words to a package that is not a step",
		"internal/playground/report imports internal/playground/apply (through internal/playground/vocab): step packages do not import each other; move the shared words to a package that is not a step",
	}
	if got := violations(graph); !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}

// parseGraph reads go list's lines: a package, then what it imports.
func parseGraph(out string) map[string][]string {
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			graph[fields[0]] = fields[1:]
		}
	}
	return graph
}

// violations lists, for each step, the other steps it reaches directly or
// through non-step packages, other than the allowed ones.
func violations(graph map[string][]string) []string {
	var found []string
	for _, s := range steps {
		for _, chain := range reachedSteps(graph, playground+s) {
			msg := short(playground+s) + " imports " + short(chain[len(chain)-1])
			if len(chain) > 1 {
				via := make([]string, len(chain)-1)
				for i, c := range chain[:len(chain)-1] {
					via[i] = short(c)
				}
				msg += " (through " + strings.Join(via, ", ") + ")"
			}
			found = append(found, msg+": step packages do not import each other; move the shared words to a package that is not a step")
		}
	}
	return found
}

// reachedSteps walks the imports of from, breadth first, stopping at step
// packages: each chain ends at a step and passes only through non-steps.
func reachedSteps(graph map[string][]string, from string) [][]string {
	var found [][]string
	seen := map[string]bool{from: true}
	queue := [][]string{nil}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		at := from
		if len(chain) > 0 {
			at = chain[len(chain)-1]
		}
		for _, imp := range graph[at] {
			if seen[imp] || !strings.HasPrefix(imp, "github.com/adminsched/scheduler-plugins/") {
				continue
			}
			seen[imp] = true
			next := append(slices.Clone(chain), imp)
			if isStep(imp) {
				found = append(found, next)
				continue
			}
			queue = append(queue, next)
		}
	}
	return found
}

func isStep(pkg string) bool {
	return strings.HasPrefix(pkg, playground) && slices.Contains(steps, strings.TrimPrefix(pkg, playground))
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/adminsched/scheduler-plugins/")
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
