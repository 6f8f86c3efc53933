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

// Package upstream runs the scheduler_perf test cases that the pinned
// k8s.io/kubernetes module ships under test/integration/scheduler_perf, read
// from the module at test time, with this repository's plugins added to
// the profile of every test case, through upstream's own harness and with
// the options each folder's own test passes. See doc/performance.md.
//
// It runs as a benchmark because only RunBenchmarkPerfScheduling takes a
// plugin registry. make upstream-perf-test (part of make test) runs the
// integration-size workloads with every plugin enabled, chosen by the label
// filter upstream's own TestSchedulerPerf uses (workloads also labelled
// performance carry throughput thresholds set for upstream's CI machines):
//
//	go test ./test/integration/scheduler_perf/upstream -run '^$' -bench . -benchtime=1x \
//		-perf-scheduling-label-filter=integration-test,-performance
//
// make bench-upstream runs chosen long workloads under several profiles.
//
// The package builds only against the default minor (tag !kube1.36 on every
// file): its suite table mirrors that module's folders, and 1.36's module
// has a different set (no batching, podgroup or workload_preemption, fewer
// DRA folders), a harness without WithPodsSchedulingTimeout and its ktesting
// elsewhere; 1.36's suites would need a table of their own.
package upstream

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/dynamic-resource-allocation/structured"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/adminsched/scheduler-plugins/test/integration/scheduler_perf/harness"
)

var profileList = flag.String("upstream-profiles", "all",
	"comma-separated profiles to run every suite under, in this order; of "+names(profiles))

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, "../../../../bin", "../../../../_output/scheduler_perf/upstream"))
}

// BenchmarkUpstream runs every suite under every profile -upstream-profiles
// names, one sub-benchmark each:
// BenchmarkUpstream/<folder>[/allocator=<name>]/profile=<name>/<test case>/<workload>,
// with / in a folder's path written as -.
func BenchmarkUpstream(b *testing.B) {
	selected, err := selectProfiles(*profileList)
	if err != nil {
		b.Fatal(err)
	}
	root := moduleDir(b)
	for _, s := range suites {
		b.Run(strings.ReplaceAll(s.dir, "/", "-"), func(b *testing.B) {
			profilesOf := func(b *testing.B, allocator string) {
				for _, p := range selected {
					b.Run("profile="+p.name, func(b *testing.B) {
						run(b, root, s, allocator, p, harness.Registry())
					})
				}
			}
			if len(s.allocators) == 0 {
				profilesOf(b, "")
				return
			}
			for _, a := range s.allocators {
				b.Run("allocator="+a, func(b *testing.B) {
					structured.EnableAllocators(a)
					defer structured.EnableAllocators()
					profilesOf(b, a)
				})
			}
		})
	}
}

// run runs one suite's test cases under one profile, from the suite's
// folder (its test cases name templates relative to it).
func run(b *testing.B, root string, s suite, allocator string, p profile, registry frameworkruntime.Registry) {
	dir := filepath.Join(root, s.dir)
	config := withProfile(b, dir, b.TempDir(), p.edit)
	b.Chdir(dir)
	var options []perf.SchedulerPerfOption
	if s.options != nil {
		options = append(options, s.options(allocator)...)
	}
	options = append(options, p.options...)
	topic := strings.Join([]string{"upstream", strings.ReplaceAll(s.dir, "/", "_"), allocator, p.name}, "_")
	perf.RunBenchmarkPerfScheduling(b, config, topic, registry, options...)
}

// TestSuiteFails shows that a run fails when a plugin breaks a workload:
// the gang-scheduling suite passes with our plugins and fails with a plugin
// that rejects every member of a pod group.
func TestSuiteFails(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server per workload")
	}
	root := moduleDir(t)
	saved := perf.PerfSchedulingLabelFilter
	perf.PerfSchedulingLabelFilter = "integration-test,+short,-performance"
	t.Cleanup(func() { perf.PerfSchedulingLabelFilter = saved })

	gangs := suite{dir: "podgroup/gangscheduling"}
	failed := func(p profile, registry frameworkruntime.Registry) bool {
		var failed bool
		testing.Benchmark(func(b *testing.B) {
			run(b, root, gangs, "", p, registry)
			failed = b.Failed()
		})
		return failed
	}
	all, err := selectProfiles("all")
	if err != nil {
		t.Fatal(err)
	}
	if failed(all[0], harness.Registry()) {
		t.Fatal("the gang-scheduling suite failed with our plugins (rerun: go test -run '^$' -bench 'BenchmarkUpstream/podgroup-gangscheduling' -benchtime=1x -perf-scheduling-label-filter=integration-test,+short,-performance)")
	}
	registry := harness.Registry()
	registry[rejectGangs{}.Name()] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return rejectGangs{}, nil
	}
	rejecting := profile{
		name:    "rejectGangs",
		edit:    enable(plugin(rejectGangs{}.Name(), 0)),
		options: []perf.SchedulerPerfOption{perf.WithPodsSchedulingTimeout(pendingTimeout)},
	}
	if !failed(rejecting, registry) {
		t.Fatal("the gang-scheduling suite passed with a plugin that rejects every pod-group member")
	}
}

// pendingTimeout is how long TestSuiteFails lets rejected pods wait: they
// never schedule, and upstream's default is ten minutes.
const pendingTimeout = 20 * time.Second

// rejectGangs is a Filter plugin that rejects every pod of a pod group.
type rejectGangs struct{}

func (rejectGangs) Name() string { return "RejectGangs" }

func (rejectGangs) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ fwk.NodeInfo) *fwk.Status {
	if pod.Spec.SchedulingGroup != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "member of a pod group")
	}
	return nil
}
