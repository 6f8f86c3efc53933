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

package schedulerperf

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/adminsched/scheduler-plugins/pkg/kubeversion"
	"github.com/adminsched/scheduler-plugins/test/integration/scheduler_perf/harness"
)

const configFile = "performance-config.yaml"

// registry is what our scheduler build adds to the in-tree plugins (with
// the NodePoolQuota CRD installed by its factory).
var registry = harness.Registry()

// BenchmarkPerfScheduling runs the workloads that -perf-scheduling-label-filter
// selects (default "performance": 500Nodes and 5000Nodes) under every profile.
// Run it with -benchtime=1x; select sizes with -bench, e.g.
// 'BenchmarkPerfScheduling/.*/500Nodes'.
func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, configFile, "nodelesspods", registry)
}

// TestSchedulerPerfSmoke runs the Smoke workload (100 nodes, 200 measured
// pods) under every profile and fails if a workload does not complete: every
// measured pod scheduled, no error from the harness.
//
// Upstream's RunIntegrationPerfScheduling takes no plugin registry, so it
// could not load the profiles that enable NodeLessPods: this test runs this
// test binary again as the benchmark, with the integration-test label
// filter. Its output (the harness logs every binding) is kept out of the
// test's; a failure shows the failing workloads' messages and the last
// error lines logged.
func TestSchedulerPerfSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server per profile")
	}
	if kubeversion.Minor < 37 {
		// The harness parses the whole file, so one such field fails every
		// workload.
		t.Skipf("%s passes templateParams to createAny, which the scheduler_perf harness of %s does not have (since 1.37)", configFile, kubeversion.String())
	}
	args := []string{"-test.run=^$", "-test.bench=" + smokeBench, "-test.benchtime=1x", "-perf-scheduling-label-filter=integration-test"}
	if deadline, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(deadline).Round(time.Second).String())
	}
	out, err := exec.Command(os.Args[0], args...).CombinedOutput()
	completed, failures := smokeOutcome(out)
	if err != nil && len(failures) == 0 {
		// Killed, or a panic: no test message, so the output's end.
		failures = lastLines(out, maxErrorLines)
	}
	if err != nil || len(failures) > 0 || completed == 0 {
		t.Fatalf("scheduler_perf Smoke workloads failed (%v; %d completed; rerun with go test -run '^$' -bench '%s' -benchtime=1x -perf-scheduling-label-filter=integration-test for the whole log):\n%s",
			err, completed, smokeBench, strings.Join(failures, "\n"))
	}
	t.Logf("%d Smoke workloads completed", completed)
}

const smokeBench = "BenchmarkPerfScheduling/.*/Smoke"

var (
	// benchResult is a completed benchmark's result line.
	benchResult = regexp.MustCompile(`^BenchmarkPerfScheduling/\S+\s+1\s`)
	// klogError is a line klog wrote at error level.
	klogError = regexp.MustCompile(`^E\d{4} `)
)

// A failure shows at most maxErrorLines error lines and, of the failed
// workloads' messages, the first maxFailureHead and the last
// maxFailureTail lines.
const (
	maxErrorLines  = 40
	maxFailureHead = 50
	maxFailureTail = 250
)

// smokeOutcome reads the benchmark's output: how many workloads completed
// and, when some did not, the lines that say why: "--- FAIL" lines, the
// indented messages under them, and the last error lines logged.
func smokeOutcome(out []byte) (completed int, failures []string) {
	var errs []string
	inFailure := false // in the indented messages under a "--- FAIL" line
	for _, line := range strings.Split(string(out), "\n") {
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case benchResult.MatchString(line):
			completed++
		case strings.HasPrefix(strings.TrimSpace(line), "--- FAIL"):
			inFailure = true
			failures = append(failures, line)
		case inFailure && indented:
			failures = append(failures, line)
		case klogError.MatchString(line):
			errs = append(errs, line)
		}
		if !indented && !strings.HasPrefix(strings.TrimSpace(line), "--- FAIL") {
			inFailure = false
		}
	}
	if len(failures) == 0 {
		return completed, nil
	}
	if len(errs) > maxErrorLines {
		errs = errs[len(errs)-maxErrorLines:]
	}
	// A failed workload's block holds its whole log: keep its head, which
	// names the workload, and its end, where the fatal error is.
	if n := len(failures); n > maxFailureHead+maxFailureTail {
		left := fmt.Sprintf("[%d lines left out]", n-maxFailureHead-maxFailureTail)
		failures = append(append(failures[:maxFailureHead:maxFailureHead], left), failures[n-maxFailureTail:]...)
	}
	return completed, append(failures, errs...)
}

// lastLines is the last n lines of out.
func lastLines(out []byte, n int) []string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// TestSmokeOutcome reads a benchmark output shaped like the harness's: one
// workload completed (its log printed under "--- BENCH"), one failed with
// its message, klog lines around.
func TestSmokeOutcome(t *testing.T) {
	out := `I1206 13:57:23.170837   23743 schedule_one.go:483] "Successfully bound pod to node"
BenchmarkPerfScheduling/Default/Smoke-2   	       1	         1.557 SchedulingDuration/Duration
--- BENCH: BenchmarkPerfScheduling/Default/Smoke-2
    testserver.go:434: Starting kube-apiserver on port 42061...
E1206 13:58:01.000000   23743 framework.go:1] "first error"
E1206 13:58:02.000000   23743 framework.go:1] "second error"
I1206 13:58:03.000000   23743 etcd.go:197] "etcd output" stacktrace=<
	go.etcd.io/etcd/server/v3/embed.(*Etcd).errHandler
		/root/go/pkg/mod/go.etcd.io/etcd/server/v3@v3.7.0/embed/etcd.go:908
 >
--- FAIL: BenchmarkPerfScheduling/NodePoolQuotaIdle/Smoke
    scheduler_perf.go:1160: starting the scheduler:
        NodePoolQuota: not served
FAIL
`
	completed, failures := smokeOutcome([]byte(out))
	want := []string{
		"--- FAIL: BenchmarkPerfScheduling/NodePoolQuotaIdle/Smoke",
		"    scheduler_perf.go:1160: starting the scheduler:",
		"        NodePoolQuota: not served",
		`E1206 13:58:01.000000   23743 framework.go:1] "first error"`,
		`E1206 13:58:02.000000   23743 framework.go:1] "second error"`,
	}
	if completed != 1 || strings.Join(failures, "\n") != strings.Join(want, "\n") {
		t.Errorf("smokeOutcome: %d completed, failures\n%s\nwant 1 completed, failures\n%s", completed, strings.Join(failures, "\n"), strings.Join(want, "\n"))
	}
	if completed, failures := smokeOutcome([]byte(strings.Split(out, "--- FAIL")[0])); completed != 1 || failures != nil {
		t.Errorf("without a failure: %d completed, failures %q, want 1 and none", completed, failures)
	}
	long := "--- FAIL: BenchmarkPerfScheduling/X/Smoke\n" + strings.Repeat("    log.go:1: line\n", 1000) + "    util.go:127: FATAL ERROR\n"
	_, failures = smokeOutcome([]byte(long))
	if n := len(failures); n != maxFailureHead+1+maxFailureTail || failures[0] != "--- FAIL: BenchmarkPerfScheduling/X/Smoke" ||
		failures[maxFailureHead] != "[702 lines left out]" || failures[n-1] != "    util.go:127: FATAL ERROR" {
		t.Errorf("a failure of 1,002 lines shown as %d lines, from %q to %q, want its head and end", n, failures[0], failures[n-1])
	}
}
