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

package autoscaler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/adminsched/scheduler-plugins/internal/localcluster/karpenter"
	"github.com/adminsched/scheduler-plugins/internal/testconfig"
	"github.com/adminsched/scheduler-plugins/test/integration/framework"
)

// The layout of TestDeschedulerConsolidation. A fill pod of 1500m takes a
// c-2x node (1900m allocatable) of its own and leaves 400m: room for one
// web pod of 300m. Of 8 web pods, 4 go one to each fill node and 4 to a
// fifth node Karpenter adds for them. Once the fill pods are gone, 4 nodes
// hold one web pod each (300m, 16% of the CPU, below all of the policy's
// 20% thresholds) and one holds 4 (63%): 5 nodes, none empty, for 2400m
// that 2 nodes hold (6 web pods a node).
const (
	fillCPU           = "1500m"
	fillPods          = 4
	spreadWebCPU      = "300m"
	spreadWebReplicas = 8
	minimalNodes      = 2
	// deschedulingInterval is short, so that the thin nodes are emptied
	// within the first cycles of the window.
	deschedulingInterval = 5 * time.Second
	// deschedulerWindow covers the evictions (two or three cycles) and
	// Karpenter's Empty consolidation of the nodes they emptied, in one or
	// two commands (consolidateAfter 5 s, up to 10 s until its disruption
	// loop looks, 15 s validation each; measured: all 3 gone at 34 s).
	deschedulerWindow = 90 * time.Second
	nodeSecondsNoise  = 10.0
)

// evictedPodLog is the line the descheduler logs for each eviction.
var evictedPodLog = regexp.MustCompile(`"Evicted pod" pod="([^"]+)"`)

// deschedulerRun is what one run of TestDeschedulerConsolidation measured.
type deschedulerRun struct {
	consolidationResult
	// before maps the pods at the window's start to their nodes.
	before map[types.UID]string
	// evicted are the pods the API server marked DisruptionTarget.
	evicted map[types.UID]string
	// logged are the pods the descheduler logged as evicted, in order.
	logged []string
	// nodesAtEnd and occupiedAtEnd name the nodes at the end of the
	// window and those holding a pod.
	nodesAtEnd, occupiedAtEnd map[string]bool
}

// TestDeschedulerConsolidation is the Karpenter variant of the
// descheduler's consolidation (KEP-47 §5, §7 step 7): the shipped
// consolidating profile (NodeLessPods MostPods) never moves a running pod,
// so pods left spread over more nodes than they need keep those nodes;
// the shipped manifests/descheduler/consolidate-policy.yaml
// (HighNodeUtilization with PolicyEvictor) evicts the pods of the thin
// nodes, the profile packs them onto the busy ones, and Karpenter
// (WhenEmpty) removes the emptied nodes. Both runs start from the same
// layout; node-seconds and nodes are measured over the same window.
func TestDeschedulerConsolidation(t *testing.T) {
	if os.Getenv("AUTOSCALER_LONG") == "" {
		t.Skip("a long variant (about 4 minutes): set AUTOSCALER_LONG=1 to run it")
	}
	alone := deschedulerRun{}
	withDescheduler := deschedulerRun{}
	if !t.Run("profile", func(t *testing.T) { alone = runDeschedulerWorkload(t, false) }) ||
		!t.Run("profile+descheduler", func(t *testing.T) { withDescheduler = runDeschedulerWorkload(t, true) }) {
		t.Fatal("a run failed: no comparison")
	}
	t.Logf("window %s: %-20s %5s %12s %7s %7s %7s %s", deschedulerWindow, "run", "nodes", "node-seconds", "claims+", "claims-", "evicted", "reasons")
	for _, r := range []struct {
		name string
		deschedulerRun
	}{{"profile", alone}, {"profile+descheduler", withDescheduler}} {
		t.Logf("window %s: %-20s %5d %12.1f %7d %7d %7d %v", deschedulerWindow, r.name,
			r.NodesAtEnd, r.NodeSeconds, r.ClaimsCreated, r.ClaimsRemoved, r.Evicted, r.Reasons)
	}
	if alone.NodesAtEnd <= minimalNodes {
		t.Errorf("the profile alone ends on %d nodes, already the minimum %d: the layout no longer leaves pods spread", alone.NodesAtEnd, minimalNodes)
	}
	if alone.Evicted != 0 {
		t.Errorf("the profile alone: %d pods evicted, want 0 (WhenEmpty evicts nothing)", alone.Evicted)
	}
	if withDescheduler.NodesAtEnd >= alone.NodesAtEnd {
		t.Errorf("nodes at the end of the window: %d with the descheduler, %d without; want fewer with it", withDescheduler.NodesAtEnd, alone.NodesAtEnd)
	}
	// Beyond the sampling's noise: equal counts integrate a few tenths apart.
	if withDescheduler.NodeSeconds > alone.NodeSeconds-nodeSecondsNoise {
		t.Errorf("node-seconds: %.1f with the descheduler, %.1f without; want %.0f fewer with it at least", withDescheduler.NodeSeconds, alone.NodeSeconds, nodeSecondsNoise)
	}
	checkEvictions(t, withDescheduler)
}

// checkEvictions: the descheduler evicted pods, none twice, and Karpenter
// removed every node that held a pod at the window's start and none at
// its end.
func checkEvictions(t *testing.T, r deschedulerRun) {
	t.Helper()
	if len(r.evicted) == 0 {
		t.Error("the descheduler evicted nothing")
	}
	if len(r.logged) != len(r.evicted) {
		t.Errorf("the descheduler logged %d evictions %v, the API server marked %d pods evicted: a pod was evicted twice", len(r.logged), r.logged, len(r.evicted))
	}
	// A replacement bound to a node whose pod the scheduler had not yet
	// seen go is alone there, and evicted in a later cycle: a figure, not
	// a failure.
	replacements := 0
	for uid := range r.evicted {
		if _, ok := r.before[uid]; !ok {
			replacements++
		}
	}
	emptied := map[string]bool{}
	for _, node := range r.before {
		if !r.occupiedAtEnd[node] {
			emptied[node] = true
		}
	}
	if len(emptied) == 0 {
		t.Error("no node was emptied")
	}
	for node := range emptied {
		if r.nodesAtEnd[node] {
			t.Errorf("node %s, emptied by the descheduler, is still there at the end of the window", node)
		}
	}
	t.Logf("evicted %d pods (%d of them replacements moved again); nodes emptied, all removed by Karpenter: %d", len(r.evicted), replacements, len(emptied))
}

// runDeschedulerWorkload lays the pods out on an empty cluster, then
// records the cluster over deschedulerWindow, with the descheduler running
// when withDescheduler.
func runDeschedulerWorkload(t *testing.T, withDescheduler bool) deschedulerRun {
	tc := newTestContext(t)
	np := karpenter.RegionNodePool("us-east-1")
	np.Name = "small"
	np.Requirements = append(np.Requirements[:1],
		v1.NodeSelectorRequirement{Key: karpenter.CapacityTypeLabel, Operator: v1.NodeSelectorOpIn, Values: []string{karpenter.CapacityOnDemand}},
		v1.NodeSelectorRequirement{Key: v1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{smallInstanceType}})
	np.ConsolidationPolicy, np.ConsolidateAfter = karpenter.WhenEmpty, 5*time.Second
	// A budget of 100%: the emptied nodes go together, in a shorter window.
	tc.createNodePool(np)
	cfg, scheduler := shippedConsolidationConfig(t)
	tc.startScheduler(cfg)

	setup := time.Now()
	tc.createWorkload(tc.newWorkload("fill", scheduler, fillCPU, fillPods))
	tc.waitForWorkload("fill", fillPods)
	tc.createWorkload(tc.newWorkload("web", scheduler, spreadWebCPU, spreadWebReplicas))
	tc.waitForWorkload("web", spreadWebReplicas)
	tc.scaleWorkload("fill", 0)
	tc.waitForWorkload("fill", 0)
	pods := tc.namespacePods()
	t.Logf("layout after %s: %s", time.Since(setup).Round(100*time.Millisecond), podsPerNode(tc.nodes(), pods))
	run := deschedulerRun{before: map[types.UID]string{}, nodesAtEnd: map[string]bool{}, occupiedAtEnd: map[string]bool{}}
	for _, p := range pods {
		run.before[p.UID] = p.Spec.NodeName
	}

	rec := tc.startNodeRecorder()
	start := time.Now()
	end := start.Add(deschedulerWindow)
	stopped := false
	defer func() {
		if !stopped {
			_ = rec.stop()
		}
	}()
	var proc *framework.Process
	if withDescheduler {
		proc = tc.startDescheduler(cfg)
	}
	tc.poll("the end of the window", time.Until(end)+time.Minute, func(context.Context) (bool, error) {
		if proc != nil && proc.Exited() {
			return false, fmt.Errorf("the descheduler exited (%v); if PolicyEvictor is not registered, rebuild it with `make descheduler`", proc.ProcessState())
		}
		return !time.Now().Before(end), nil
	})
	pods = tc.namespacePods()
	for _, n := range tc.nodes() {
		run.nodesAtEnd[n.Name] = true
	}
	for _, p := range pods {
		run.occupiedAtEnd[p.Spec.NodeName] = true
	}
	t.Logf("%s: end of the window: %s", time.Since(start).Round(100*time.Millisecond), podsPerNode(tc.nodes(), pods))
	if proc != nil {
		proc.Stop()
		for _, m := range evictedPodLog.FindAllStringSubmatch(proc.Output(), -1) {
			run.logged = append(run.logged, m[1])
		}
	}
	stopped = true
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Ready nodes over time (from the window's start):%s", rec.nodeChanges(start))
	run.consolidationResult = rec.summarize(start, end)
	run.evicted = rec.evicted

	for _, p := range tc.waitForWorkload("web", spreadWebReplicas) {
		if p.Status.Phase != v1.PodRunning {
			t.Errorf("pod %s is %s at the end, want Running", p.Name, p.Status.Phase)
		}
	}
	return run
}

// startDescheduler runs the descheduler binary (DESCHEDULER_BINARY, else
// bin/descheduler) on the shipped consolidate-policy.yaml, PolicyEvictor
// reading the scheduler's config cfg, until the test ends.
func (tc *testContext) startDescheduler(cfg *configv1.KubeSchedulerConfiguration) *framework.Process {
	tc.t.Helper()
	bin := os.Getenv("DESCHEDULER_BINARY")
	if bin == "" {
		bin, _ = filepath.Abs("../../../bin/descheduler")
	}
	if _, err := os.Stat(bin); err != nil {
		tc.t.Fatalf("this test runs the descheduler binary with our PolicyEvictor: build it with `make descheduler` (or set DESCHEDULER_BINARY): %v", err)
	}
	data, err := yaml.Marshal(shippedConsolidatePolicy(tc.t, testconfig.Write(tc.t, cfg)))
	if err != nil {
		tc.t.Fatal(err)
	}
	path := filepath.Join(tc.t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tc.t.Fatal(err)
	}
	// No serving port and no metrics: the evictions are counted from its log.
	cmd := exec.Command(bin, "--policy-config-file="+path,
		"--descheduling-interval="+deschedulingInterval.String(),
		"--kubeconfig="+cluster.KubeconfigPath, "--leader-elect=false",
		"--secure-port=0", "--disable-metrics", "--v=3")
	proc, err := framework.StartProcess(tc.t, "the descheduler", cmd)
	if err != nil {
		tc.t.Fatalf("starting %s: %v", bin, err)
	}
	tc.t.Logf("descheduler policy:\n%s", data)
	return proc
}

// shippedConsolidatePolicy is consolidate-policy.yaml as shipped, with
// PolicyEvictor's schedulerConfig pointed at schedulerConfig.
func shippedConsolidatePolicy(t *testing.T, schedulerConfig string) map[string]any {
	t.Helper()
	const file = "../../../manifests/descheduler/consolidate-policy.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var policy map[string]any
	if err := yaml.Unmarshal(data, &policy); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	profiles, _ := policy["profiles"].([]any)
	for _, prof := range profiles {
		prof, _ := prof.(map[string]any)
		config, _ := prof["pluginConfig"].([]any)
		for _, c := range config {
			c, _ := c.(map[string]any)
			if args, ok := c["args"].(map[string]any); ok && c["name"] == "PolicyEvictor" {
				args["schedulerConfig"] = schedulerConfig
				return policy
			}
		}
	}
	t.Fatalf("%s: no PolicyEvictor args to point at the test's scheduler config", file)
	return nil
}
