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

package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestBoundUnschedulable(t *testing.T) {
	scheduled := func(pod *corev1.Pod, status corev1.ConditionStatus, reason string) *corev1.Pod {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: status, Reason: reason}}
		return pod
	}
	bound := func() *corev1.Pod { return &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}} }
	tests := []struct {
		name                 string
		pod                  *corev1.Pod
		bound, unschedulable bool
	}{
		{"new", &corev1.Pod{}, false, false},
		{"bound", bound(), true, false},
		{"unschedulable", scheduled(&corev1.Pod{}, corev1.ConditionFalse, corev1.PodReasonUnschedulable), false, true},
		{"gated", scheduled(&corev1.Pod{}, corev1.ConditionFalse, corev1.PodReasonSchedulingGated), false, false},
		{"scheduled", scheduled(bound(), corev1.ConditionTrue, ""), true, false},
		// Only the PodScheduled condition counts.
		{"not ready", &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Bound(tt.pod); got != tt.bound {
				t.Errorf("Bound = %v, want %v", got, tt.bound)
			}
			if got := Unschedulable(tt.pod); got != tt.unschedulable {
				t.Errorf("Unschedulable = %v, want %v", got, tt.unschedulable)
			}
		})
	}
}

func TestTargetNames(t *testing.T) {
	tests := []struct {
		target      Target
		str, object string
	}{
		{Target{Kind: "Deployment", Namespace: "team", Name: "web"}, "Deployment team/web", "Deployment/web"},
		{Target{Kind: "PriorityClass", Name: "high"}, "PriorityClass high", "PriorityClass/high"},
	}
	for _, tt := range tests {
		if got := tt.target.String(); got != tt.str {
			t.Errorf("String() = %q, want %q", got, tt.str)
		}
		if got := tt.target.Object(); got != tt.object {
			t.Errorf("Object() = %q, want %q", got, tt.object)
		}
	}
}

// TestLeaf keeps the vocabulary below every step: the steps import it, so
// it links no step, no client and no cluster.
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const self = "github.com/adminsched/scheduler-plugins/internal/playground/workload"
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "github.com/adminsched/scheduler-plugins/") && dep != self {
			t.Errorf("the workload package links %s", dep)
		}
	}
}

// TestDefinedOnce keeps one vocabulary: no exported type or constant is
// defined in two of the playground's packages (the steps once kept copies
// of OwnedPod, ObjectRef and DefaultNamespace so as not to import each
// other), and no key of the project's (an annotation, a label) is spelt
// twice in them and the embedded cluster's package (apply's
// BoundPodAnnotation was localcluster's PendingAnnotation).
func TestDefinedOnce(t *testing.T) {
	names := map[string][]string{}
	values := map[string][]string{}
	for _, dir := range definingDirs(t) {
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			for _, f := range pkg.Files {
				collectDefinitions(f, dir, names, values)
			}
		}
	}
	for _, m := range []map[string][]string{names, values} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if dirs := m[k]; len(dirs) > 1 {
				t.Errorf("%s is defined in %s: define it once, here if the steps share it", k, strings.Join(dirs, " and "))
			}
		}
	}
}

// definingDirs are the playground's packages and the embedded cluster's.
func definingDirs(t *testing.T) []string {
	dirs := []string{"..", filepath.Join("..", "..", "localcluster")}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" {
			dirs = append(dirs, filepath.Join("..", e.Name()))
		}
	}
	return dirs
}

// collectDefinitions adds f's exported types and constants to names, and
// the project's keys its string constants hold to values, each with dir. The engine and
// snapshot each have their own Options: a type of one step stays in it.
func collectDefinitions(f *ast.File, dir string, names, values map[string][]string) {
	add := func(m map[string][]string, k string) {
		if !slices.Contains(m[k], dir) {
			m[k] = append(m[k], dir)
		}
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && s.Name.Name != "Options" {
					add(names, "type "+s.Name.Name)
				}
			case *ast.ValueSpec:
				for i, n := range s.Names {
					if g.Tok == token.CONST && n.IsExported() {
						add(names, "constant "+n.Name)
					}
					if lit, ok := valueAt(s, i).(*ast.BasicLit); ok && g.Tok == token.CONST && lit.Kind == token.STRING && strings.Contains(lit.Value, "adminsched.io/") {
						add(values, "the value "+lit.Value)
					}
				}
			}
		}
	}
}

func valueAt(s *ast.ValueSpec, i int) ast.Expr {
	if i < len(s.Values) {
		return s.Values[i]
	}
	return nil
}
