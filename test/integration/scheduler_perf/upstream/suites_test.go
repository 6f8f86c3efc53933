//go:build !kube1.36 && !kube1.35

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

package upstream

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// suite is one folder of upstream's scheduler_perf: its performance-config.yaml
// and what the folder's own TestSchedulerPerf passes to the harness.
type suite struct {
	// dir is the folder under test/integration/scheduler_perf.
	dir string
	// allocators are the DRA allocators its test runs under, one run each
	// (structured.EnableAllocators); none means the default allocator.
	allocators []string
	// options returns the harness options its test passes, for one
	// allocator.
	options func(allocator string) []perf.SchedulerPerfOption
}

// suites mirrors the TestSchedulerPerf functions of k8s.io/kubernetes
// v1.37.2's scheduler_perf folders. TestSuitesMatchModule fails when the
// pinned module gains or loses a folder, so that a Kubernetes bump revisits
// this table.
var suites = []suite{
	{dir: "affinity"},
	{dir: "batching"},
	{dir: "default_preemption"},
	{dir: "dra", allocators: []string{"stable", "incubating", "experimental"}, options: draStableOptions},
	{dir: "dra/compatibilitygroups", allocators: []string{"experimental"}},
	{dir: "dra/consumablecapacity", allocators: []string{"experimental"}},
	{dir: "dra/devicetaints", allocators: []string{"experimental"}},
	{dir: "dra/extendedresource", allocators: []string{"experimental"}},
	{dir: "dra/extendedresource/scoring", allocators: []string{"experimental"}},
	{dir: "dra/listattributes", allocators: []string{"experimental"}},
	{dir: "dra/partitionabledevices", allocators: []string{"experimental"}},
	{dir: "dra/prioritizedlist", allocators: []string{"incubating", "experimental"}},
	{dir: "dra/workloadresourceclaims"},
	{dir: "event_handling"},
	{dir: "misc"},
	{dir: "nodedeclaredfeatures", options: nodeDeclaredFeaturesOptions},
	{dir: "podgroup/basicscheduling"},
	{dir: "podgroup/gangscheduling"},
	{dir: "podgroup/tas", options: tasOptions},
	{dir: "starvation"},
	{dir: "topology_spreading"},
	{dir: "volumes"},
	{dir: "workload_preemption"},
}

// moduleDir returns where the pinned k8s.io/kubernetes module is, from the
// go command, so that the suite reads the version go.mod pins.
func moduleDir(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		tb.Fatalf("go list -m k8s.io/kubernetes: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		tb.Fatal("go list -m k8s.io/kubernetes: the module is not downloaded (go mod download k8s.io/kubernetes)")
	}
	return filepath.Join(dir, "test", "integration", "scheduler_perf")
}

// TestSuitesMatchModule checks the table against the module: every folder
// with a performance-config.yaml has a suite, and every suite a folder.
func TestSuitesMatchModule(t *testing.T) {
	root := moduleDir(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "performance-config.yaml" {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range suites {
		listed = append(listed, s.dir)
	}
	slices.Sort(found)
	slices.Sort(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("upstream's scheduler_perf folders are %q, the suite table lists %q: update suites from the folders' TestSchedulerPerf", found, listed)
	}
}
